#include "cli/probe_command.hpp"

#include <sstream>

#include "cli/cluster_options.hpp"
#include "cli/output_files.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "probe/expectations.hpp"
#include "probe/probe_report.hpp"
#include "probe/profile_json.hpp"
#include "probe/runner.hpp"

namespace gf::cli {

namespace {

std::set<std::string> parse_parts(const std::string& text) {
  std::set<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (probe::part_names().count(item) == 0) {
      const std::string hint = suggest(item, probe::part_names());
      throw InputError({}, "--parts",
                       "unknown part '" + item + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                       join(probe::part_names()));
    }
    out.insert(item);
  }
  if (out.empty()) throw InputError({}, "--parts", "empty list", join(probe::part_names()));
  return out;
}

}  // namespace

void ProbeOptions::add_to(CLI::App& app) {
  app.add_flag("--quick", quick, "Smaller files and fewer repetitions: about 30 s in all");
  app.add_flag("--compare", compare,
               "Print measured beside expected for the detected hardware (catalog figures), with ok / BELOW");
  app.add_flag("--mpi", mpi,
               "Under mpirun: point-to-point bandwidth and latency between ranks, MPI_Allreduce and NCCL busbw");
  app.add_option("--format", format, "table | json");
  save_option = app.add_option("--save", save, "Write the profile (discovery and measurements) to this JSON file");
  load_option = app.add_option("--load,--profile", load, "Read a saved profile instead of measuring");
  app.add_option("--dir", dir, "Directory for the storage probe's temporary file (default: current directory)");
  app.add_option("--threads", threads, "Threads for the memory and decode probes, 1 or more (default: one per core)");
  app.add_option("--parts", parts, "Comma-separated subset to measure: memory, storage, decode, gpu (default: all)");
  add_catalog_option(app, catalog_dir);
}

std::string ProbeOptions::run() const {
  if (format != "table" && format != "json") throw InputError({}, "--format", "got '" + format + "'", "table, json");
  const bool loading = !load.empty() || (load_option != nullptr && load_option->count() > 0);
  if (loading && load.empty()) throw InputError({}, "--load", "empty file name", "a profile written by probe --save");
  if (loading && mpi) throw InputError({}, "--mpi", "cannot measure and --load at once", "--mpi or --load");
  const bool saving = !save.empty() || (save_option != nullptr && save_option->count() > 0);
  if (saving && save.empty()) throw InputError({}, "--save", "empty file name", "a writable file path");
  // Checked before the catalog and before measuring, which can take minutes; the profile is
  // written whole at the end (no 0-byte file from a probe that fails), never over --load's.
  if (saving) {
    refuse_same_file({{"--load", load}}, {{"--save", save}});
    check_writable(save, "--save");
  }
  probe::RunOptions o;
  o.quick = quick;
  o.directory = dir;
  o.threads = threads.empty() ? 0 : static_cast<int>(parse_whole("--threads", threads, 1, 4096));  // 0: one per core
  if (!parts.empty()) o.parts = parse_parts(parts);
  // The catalog is read first so a bad --catalog fails before minutes of measuring.
  const hw::Catalog catalog = load_catalog(catalog_dir);

  probe::Profile p;
  if (loading) {
    p = probe::profile_from_json(read_text_file(load, "--load"), load);
  } else if (mpi) {
    auto result = probe::run_mpi_probe(o);
    if (!result) return {};
    p = std::move(*result);
  } else {
    p = probe::run_probe(o);
  }
  if (saving) write_whole(save, probe::profile_to_json(p).dump(2) + "\n", "--save");

  std::vector<probe::Expectation> expectations;
  if (compare) expectations = probe::compare(p, catalog);
  if (format == "json") {
    auto j = probe::profile_to_json(p);
    if (compare) j["compare"] = probe::compare_json(expectations);
    return j.dump(2) + "\n";
  }
  std::string out = probe::profile_text(p);
  if (compare) out += probe::compare_text(expectations);
  return out;
}

}  // namespace gf::cli
