#include "cli/cluster_options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "calib/calibrate.hpp"
#include "cli/number_options.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "topo/cluster_loader.hpp"

namespace gf::cli {

namespace {

bool parse_on_off(const std::string& flag, const std::string& v) {
  if (v == "on" || v == "true" || v == "1") return true;
  if (v == "off" || v == "false" || v == "0") return false;
  throw InputError({}, flag, "got '" + v + "'", "on, off");
}

}  // namespace

long parse_whole(const std::string& flag, const std::string& v, long min, long max) {
  long out = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || out < min || out > max) {
    throw InputError({}, flag, "got '" + v + "'",
                     "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return out;
}

std::vector<std::string> split_list(const std::string& s, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const auto comma = s.find(separator, start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string notes_text(const std::vector<std::string>& notes) {
  std::string out;
  for (const auto& n : notes) out += (n.starts_with("warning: ") ? "  " : "  note: ") + n + "\n";
  return out;
}

void add_catalog_option(CLI::App& app, std::string& dir) {
  app.add_option("--catalog", dir, "Directory of extra catalog *.yaml files that override or extend the built-in one");
}

hw::Catalog load_catalog(const std::string& dir) {
  hw::Catalog c = hw::Catalog::builtin();
  if (!dir.empty()) c.load_directory(dir);
  return c;
}

void ClusterOptions::add_to(CLI::App& app) {
  app.add_option("cluster", positional, "CLUSTER: a preset name (see `gpufabric presets`) or a cluster YAML file");
  auto* p = app.add_option("--preset", preset, "Built-in cluster (see `gpufabric presets`)");
  auto* c = app.add_option("--cluster", cluster_file, "Cluster description YAML file (docs/cluster-format.md)");
  // CLUSTER beside --preset or --cluster is refused by the command line's check of extra
  // arguments (commands.cpp), which names it as the stray argument.
  p->excludes(c);
  add_catalog_option(app, catalog_dir);
  app.add_option("--nodes", nodes, "Number of nodes");
  app.add_option("--network", network, "Network technology, e.g. ib-ndr, roce-400g, eth-100g, efa");
  app.add_option("--gpu", gpu,
                 "GPU model for every GPU slot, e.g. a100-sxm4-40gb (see `gpufabric catalog`); with schedule "
                 "--mig-pack, the GPU to partition");
  app.add_option("--nic", nic, "NIC model for every NIC slot, e.g. connectx-8, efa-v4 (see `gpufabric catalog`)");
  app.add_option("--nics-per-node", nics_per_node, "Compute NICs per node");
  app.add_option("--fabric", fabric, "single | fat-tree | rail");
  app.add_option("--tiers", tiers, "Switch tiers of a fat-tree or rail fabric: 2 | 3");
  app.add_option("--oversubscription", oversubscription, "Leaf down:up port ratio R (R:1), >= 1");
  app.add_option("--gpudirect", gpudirect, "GPUDirect RDMA: on | off");
  app.add_option("--p2p", p2p, "GPU peer-to-peer: on | off");
  app.add_option("--calibration", calibration,
                 "A calibration overlay written by 'gpufabric calibrate' (docs/calibration-format.md)");
}

hw::Catalog ClusterOptions::load_catalog() const {
  hw::Catalog c = cli::load_catalog(catalog_dir);
  if (!calibration.empty()) calib::apply_calibration(read_text_file(calibration, "--calibration"), calibration, c);
  return c;
}

comm::NcclParams ClusterOptions::nccl_params() const {
  if (calibration.empty()) return comm::nccl_params();
  return calib::apply_calibration(read_text_file(calibration, "--calibration"), calibration, comm::nccl_params());
}

topo::ClusterOverrides ClusterOptions::overrides() const {
  topo::ClusterOverrides o;
  if (!nodes.empty()) o.nodes = parse_whole("--nodes", nodes, 1, 1'000'000);
  if (!network.empty()) o.network = network;
  if (!gpu.empty()) o.gpu = gpu;
  if (!nic.empty()) o.nic = nic;
  if (!nics_per_node.empty()) o.nics_per_node = static_cast<int>(parse_whole("--nics-per-node", nics_per_node, 0, 64));
  if (!fabric.empty()) o.fabric = parse_name_or_throw(topo::kFabricKindNames, fabric, "--fabric");
  if (!tiers.empty()) o.tiers = static_cast<int>(parse_whole("--tiers", tiers, 2, 3));
  if (!oversubscription.empty()) o.oversubscription = parse_finite("--oversubscription", oversubscription);
  if (!gpudirect.empty()) o.gpudirect = parse_on_off("--gpudirect", gpudirect);
  if (!p2p.empty()) o.p2p = parse_on_off("--p2p", p2p);
  return o;
}

topo::ClusterSpec ClusterOptions::load_spec(const hw::Catalog& catalog) const {
  if (preset.empty() && cluster_file.empty() && positional.empty()) {
    throw InputError({}, "CLUSTER", "no cluster given",
                     "a preset name (see `gpufabric presets`) or a cluster file, as CLUSTER, --preset NAME or "
                     "--cluster FILE");
  }
  const auto o = overrides();  // checked before loading, so a bad flag is reported first
  std::string preset_name = preset;
  std::string file = cluster_file;
  if (!positional.empty()) {
    // A preset's name wins; anything else is a file, which must exist (or the name is a typo).
    const auto names = topo::preset_names();
    if (std::find(names.begin(), names.end(), positional) != names.end()) {
      preset_name = positional;
    } else {
      std::error_code ec;
      const bool looks_like_file = positional.find('/') != std::string::npos || positional.ends_with(".yaml") ||
                                   positional.ends_with(".yml") || std::filesystem::exists(positional, ec);
      if (!looks_like_file) {
        const std::string hint = suggest(positional, names);
        throw InputError({}, "CLUSTER",
                         "'" + positional + "' is neither a preset nor a file" +
                             (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                         "a preset (" + join(names) + ") or a cluster YAML file");
      }
      file = positional;
    }
  }
  topo::ClusterSpec spec = preset_name.empty()
                               ? topo::load_cluster_file(file, catalog, positional.empty() ? "--cluster" : "CLUSTER")
                               : topo::load_preset(preset_name, catalog);
  topo::apply_overrides(spec, o, catalog);
  return spec;
}

}  // namespace gf::cli
