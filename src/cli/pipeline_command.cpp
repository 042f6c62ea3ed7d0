#include "cli/pipeline_command.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/pipeline_report.hpp"
#include "report/table.hpp"
#include "topo/topology.hpp"
#include "work/what_if.hpp"

namespace gf::cli {

work::PipelineOptions parse_pipeline_options(const std::string& source, const std::string& decode,
                                             const std::string& memory, const std::string& prefetch,
                                             const std::string& loader_cores, const std::string& batch, bool gds,
                                             const std::string& network_fs) {
  work::PipelineOptions o;
  o.source = parse_name_or_throw(work::kDataSourceNames, source, "--source");
  o.decode = parse_name_or_throw(work::kDecodeOnNames, decode, "--decode");
  o.buffers = parse_name_or_throw(work::kHostBuffersNames, memory, "--memory");
  o.prefetch = static_cast<int>(parse_whole("--prefetch", prefetch, 0, 64));
  // Left out, --loader-cores and --batch take their defaults (0 to the model); given, they must be
  // counts, since 0 cores or 0 samples cannot run.
  o.loader_cores = loader_cores.empty() ? 0 : static_cast<int>(parse_whole("--loader-cores", loader_cores, 1, 100000));
  o.batch = batch.empty() ? 0 : static_cast<int>(parse_whole("--batch", batch, 1, 1 << 20));
  o.gds = gds;
  if (!network_fs.empty() && o.source != work::DataSource::network_fs)
    throw InputError({}, "--network-fs", "names the file system of --source network-fs, and --source is " + source,
                     "--source network-fs --network-fs NAME, or leave --network-fs out");
  o.network_fs = network_fs.empty() ? "lustre" : network_fs;
  return o;
}

void PipelineOptions::add_to(CLI::App& app) {
  cluster.add_to(app);
  app.add_option("--input", input, "Input workload: a built-in name (see --list) or a workload YAML file");
  app.add_flag("--list", list, "List the built-in input workloads");
  app.add_option("--source", source, "Where samples are read from: nvme | page-cache | network-fs");
  app.add_option("--network-fs", network_fs,
                 "Catalog network file system for --source network-fs (nfs, lustre; default lustre)");
  app.add_option("--decode", decode, "Where samples are decoded: cpu | gpu (nvJPEG/NVDEC through DALI)");
  app.add_option("--memory", memory, "Host buffers for H2D copies: pinned | pageable");
  app.add_option("--prefetch", prefetch, "Batches prefetched per GPU; 0 runs the stages in turn");
  app.add_option("--loader-cores", loader_cores,
                 "Cores for loading and decoding, 1 or more (default: all but one per GPU)");
  app.add_option("--batch", batch, "Samples per GPU per step, 1 or more (default: the workload's)");
  app.add_flag("--gds", gds, "GPUDirect Storage: NVMe reads straight into GPU memory");
  app.add_option("--format", format, "table | json");
}

std::string PipelineOptions::run() const {
  if (list) {
    report::TextTable t({"name", "description"});
    for (const auto& name : work::builtin_workloads()) t.add_row({name, work::load_workload(name).description});
    return t.render();
  }
  if (format != "table" && format != "json") throw InputError({}, "--format", "got '" + format + "'", "table, json");
  if (input.empty()) {
    throw InputError({}, "--input", "no input workload given", join(work::builtin_workloads()) + ", or a YAML file");
  }
  const work::PipelineOptions o =
      parse_pipeline_options(source, decode, memory, prefetch, loader_cores, batch, gds, network_fs);

  const work::InputWorkload w = work::load_workload(input);
  const hw::Catalog catalog = cluster.load_catalog();
  const topo::Topology topology(cluster.load_spec(catalog), catalog);
  report::PipelineReport rep;
  rep.cluster = topology.spec().name;
  rep.workload = w.name;
  rep.options = o;
  rep.result = work::model_pipeline(topology, catalog, w, o);
  rep.what_ifs = work::what_ifs(topology, catalog, w, o, rep.result);
  return format == "json" ? report::pipeline_json(rep) : report::pipeline_table(rep);
}

}  // namespace gf::cli
