#include "plan/design_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "topo/cluster_loader.hpp"

namespace gf::plan {

namespace {

template <typename T>
std::vector<std::optional<T>> or_own(const std::vector<T>& v) {
  std::vector<std::optional<T>> out;
  if (v.empty()) out.emplace_back(std::nullopt);
  for (const auto& x : v) out.emplace_back(x);
  return out;
}

topo::ClusterSpec load_node(const std::string& name, const PlanSpec& plan, const hw::Catalog& catalog) {
  const auto presets = topo::preset_names();
  if (std::find(presets.begin(), presets.end(), name) != presets.end()) return topo::load_preset(name, catalog);
  const bool looks_like_file = name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
  if (!looks_like_file) {
    const std::string near = suggest(name, presets);
    throw InputError(plan.design.nodes_where, "design.nodes",
                     "'" + name + "' is neither a preset nor a cluster file" +
                         (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                     join(presets));
  }
  std::filesystem::path p = name;
  if (p.is_relative() && !plan.file.starts_with("builtin:")) p = std::filesystem::path(plan.file).parent_path() / p;
  return topo::load_cluster_file(p.string(), catalog, "design.nodes");
}

}  // namespace

DesignSet enumerate_designs(const PlanSpec& plan, const hw::Catalog& catalog) {
  DesignSet out;
  const auto& ds = plan.design;
  std::vector<std::string> sources = ds.nodes.empty() ? topo::preset_names() : ds.nodes;
  for (const auto& g : ds.gpus) catalog.gpu(g, ds.where, "design.gpus");  // unknown hardware: an error at its line
  for (const auto& n : ds.networks) catalog.network(n, ds.where, "design.networks");
  for (const auto& source : sources) {
    const topo::ClusterSpec base = load_node(source, plan, catalog);
    const auto& node = base.node;
    // A cloud instance type (its NICs are the provider's own, not sold): rented, not bought.
    const bool cloud_only = std::any_of(node.nics.begin(), node.nics.end(), [](const topo::DevicePlacement& n) {
      return n.model.starts_with("efa") || n.model == "gvnic";
    });
    if (cloud_only && !plan.costs.cloud) {
      out.skipped.push_back(source + ": a cloud instance type (its NICs are not sold); set cloud: true to rent it");
      continue;
    }
    if (!ds.gpus.empty() && std::find(ds.gpus.begin(), ds.gpus.end(), node.gpu) == ds.gpus.end()) {
      out.skipped.push_back(source + ": GPU " + node.gpu + " not in design.gpus");
      continue;
    }
    if (!ds.intra_node.empty() &&
        std::find(ds.intra_node.begin(), ds.intra_node.end(), node.gpu_fabric) == ds.intra_node.end()) {
      out.skipped.push_back(source + ": " + topo::to_string(node.gpu_fabric) + " not in design.intra_node");
      continue;
    }
    std::vector<long> per_node;
    if (ds.gpus_per_node.empty()) {
      per_node.push_back(node.gpus);
    } else {
      for (long k : ds.gpus_per_node)
        if (k <= node.gpus) per_node.push_back(k);
      if (per_node.empty()) {
        out.skipped.push_back(
            fmt::format("{}: {} GPUs per server, fewer than design.gpus_per_node asks", source, node.gpus));
        continue;
      }
    }
    for (long k : per_node)
      for (const auto& net : or_own(ds.networks))
        for (const auto& nics : or_own(ds.nics_per_node))
          for (const auto& gdr : or_own(ds.gpudirect))
            for (const auto& fabric : or_own(ds.fabrics))
              for (const auto& over : or_own(ds.oversubscription))
                for (const auto& p2p : or_own(ds.p2p)) {
                  Design d;
                  d.source = source;
                  d.base = base;
                  d.gpus_per_node = k;
                  d.trimmed = k < node.gpus && node.gpu_fabric == topo::GpuFabric::pcie;
                  d.partial = k < node.gpus && !d.trimmed;
                  d.gpu = node.gpu;
                  d.intra_node = topo::to_string(node.gpu_fabric);
                  if (net) d.overrides.network = *net;
                  if (nics) d.overrides.nics_per_node = static_cast<int>(*nics);
                  if (gdr) d.overrides.gpudirect = *gdr;
                  if (fabric) d.overrides.fabric = *fabric;
                  if (over) d.overrides.oversubscription = *over;
                  if (p2p) d.overrides.p2p = *p2p;
                  d.network = net ? *net : base.network.tech;
                  long own_nics = 0;
                  for (const auto& n : node.nics) own_nics += n.count;
                  d.nics_per_node = nics ? *nics : own_nics;
                  d.gpudirect = gdr ? *gdr : base.gpudirect;
                  d.p2p = p2p ? *p2p : base.p2p;
                  d.fabric = fabric ? topo::to_string(*fabric) : "auto";
                  d.oversubscription = over ? *over : base.network.oversubscription;
                  d.key = fmt::format("{}|g{}|{}|n{}|gdr{}|{}|o{}|p2p{}", source, k, d.network, d.nics_per_node,
                                      d.gpudirect ? 1 : 0, d.fabric, d.oversubscription, d.p2p ? 1 : 0);
                  std::string label = source;
                  if (d.partial) label += fmt::format(" ({} of {} GPUs)", k, node.gpus);
                  if (d.trimmed) label += fmt::format(" with {} GPUs", k);
                  label += fmt::format(" · {} x{}", d.network, d.nics_per_node);
                  if (d.fabric != "auto") label += " · " + d.fabric;
                  if (d.oversubscription > 1) label += fmt::format(" {:g}:1", d.oversubscription);
                  if (!d.gpudirect) label += " · no GDR";
                  if (!d.p2p) label += " · no P2P";
                  d.label = label;
                  out.designs.push_back(std::move(d));
                }
  }
  return out;
}

std::unique_ptr<topo::Topology> build_topology(const Design& d, long nodes, const hw::Catalog& catalog) {
  topo::ClusterSpec spec = d.base;
  if (d.trimmed) {
    // The first GPUs' slots populated; the PCIe tree, NICs and storage as they are.
    spec.node.gpus = static_cast<int>(d.gpus_per_node);
    if (spec.node.gpu_parents.size() > static_cast<std::size_t>(d.gpus_per_node)) {
      spec.node.gpu_parents.resize(static_cast<std::size_t>(d.gpus_per_node));
    }
  }
  topo::ClusterOverrides o = d.overrides;
  o.nodes = nodes;
  topo::apply_overrides(spec, o, catalog);
  return std::make_unique<topo::Topology>(std::move(spec), catalog);
}

}  // namespace gf::plan
