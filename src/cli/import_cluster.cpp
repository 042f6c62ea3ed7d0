#include "cli/import_cluster.hpp"

#include <fmt/format.h>

#include <memory>

#include "cli/cluster_options.hpp"
#include "core/yaml_fields.hpp"
#include "topo/import/nccl_topo_xml.hpp"
#include "topo/import/topo_matrix_text.hpp"

namespace gf::cli {

namespace {

// The flags both cluster importers take: the file, and what the file cannot say.
struct ClusterImportFlags {
  std::string file;
  std::string nodes, network, gpu, cpu, catalog_dir;

  void add_to(CLI::App& sub, const char* what) {
    sub.add_option("file", file, std::string("FILE: ") + what)->required();
    sub.add_option("--nodes", nodes, "Node count written into the cluster file (default 1)");
    sub.add_option("--network", network, "Network between nodes (a catalog network, e.g. ib-ndr)");
    sub.add_option("--gpu", gpu, "GPU model, where the file does not name it (a catalog GPU)");
    sub.add_option("--cpu", cpu, "CPU model, where the file does not name it (a catalog CPU)");
    add_catalog_option(sub, catalog_dir);
  }

  [[nodiscard]] topo::import::ImportOptions options() const {
    topo::import::ImportOptions o;
    if (!nodes.empty()) o.nodes = parse_whole("--nodes", nodes, 1, 1'000'000);
    if (!network.empty()) o.network = network;
    if (!gpu.empty()) o.gpu = gpu;
    if (!cpu.empty()) o.cpu = cpu;
    return o;
  }
};

using ImportFn = topo::import::ImportedCluster (*)(const std::string&, const std::string&, const hw::Catalog&,
                                                   const topo::import::ImportOptions&);

ImportRun add_cluster_importer(CLI::App& sub, const char* what, ImportFn read) {
  auto flags = std::make_shared<ClusterImportFlags>();
  flags->add_to(sub, what);
  return [flags, read](const std::string&) {
    const hw::Catalog catalog = load_catalog(flags->catalog_dir);
    const auto options = flags->options();
    const auto imported = read(read_text_file(flags->file, "FILE"), flags->file, catalog, options);
    ImportOutput out;
    out.text = imported.yaml;
    out.warnings = imported.warnings;
    out.inputs = {{"FILE", flags->file}};
    out.summary = fmt::format(
        "{} GPUs{}, {} NICs per node; {} warning{} (see the comments in the file)", imported.gpus,
        imported.nvlinks_per_gpu ? fmt::format(" ({} NVLinks each)", imported.nvlinks_per_gpu) : std::string(),
        imported.nics, imported.warnings.size(), imported.warnings.size() == 1 ? "" : "s");
    return out;
  };
}

}  // namespace

ImportRun add_nccl_topo_importer(CLI::App& sub) {
  return add_cluster_importer(sub, "NCCL topology XML (NCCL_TOPO_DUMP_FILE, or a cloud image's topology file)",
                              &topo::import::import_nccl_topo);
}

ImportRun add_topo_matrix_importer(CLI::App& sub) {
  return add_cluster_importer(sub, "the text `nvidia-smi topo -m` prints", &topo::import::import_topo_matrix);
}

}  // namespace gf::cli
