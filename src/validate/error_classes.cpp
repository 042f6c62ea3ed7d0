#include "validate/error_classes.hpp"

#include "work/model_size.hpp"

namespace gf::validate {

band::CollectivePath collective_path(const topo::Topology& t, long nodes) {
  band::CollectivePath p;
  p.multi_node = nodes > 1;
  const auto& spec = t.spec();
  const bool pcie_p2p = t.gpu_spec().p2p_supported || spec.p2p_patched_driver;
  switch (spec.node.gpu_fabric) {
    case topo::GpuFabric::nvswitch: p.gpu_fabric = "nvswitch"; break;
    case topo::GpuFabric::nvlink_mesh: p.gpu_fabric = "nvlink"; break;
    case topo::GpuFabric::pcie: p.gpu_fabric = pcie_p2p ? "pcie" : "no-p2p"; break;
  }
  if (!spec.p2p) p.gpu_fabric = "no-p2p";
  p.network_family = t.network().family;
  p.network_transport = t.network().transport;
  return p;
}

std::vector<std::string> training_classes(const std::string& gpu_name, const work::ModelSpec& m) {
  return band::training_classes(gpu_name, work::count_parameters(m).total / 1e9, m.moe.has_value());
}

}  // namespace gf::validate
