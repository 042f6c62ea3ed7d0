#include "topo/summary.hpp"

#include <algorithm>

namespace gf::topo {

namespace {

// The class of an inter-node pair by where its route turns around in the fabric.
std::string class_of(const NetworkFabric& f, long n1, int r1, long n2, int r2) {
  const long l1 = f.leaf_of(n1, r1);
  const long l2 = f.leaf_of(n2, r2);
  if (l1 == l2) return "same leaf switch";
  const auto& s = f.shape();
  if (s.tiers == 2) return "across spine";
  const long half = s.radix / 2;
  return l1 / half == l2 / half ? "same pod" : "across core";
}

}  // namespace

TopologySummary summarize(const Topology& t) {
  TopologySummary s;
  const Graph& g = t.graph();
  s.nodes = t.nodes();
  s.gpus = t.gpu_count();
  for (const auto& d : g.devices()) ++s.devices_by_kind[d.kind];
  for (const auto& l : g.links()) ++s.links_by_kind[l.kind];
  // Planes and bundles are modelling aids (ideal ECMP), not hardware: leave them out.
  s.devices = g.device_count() - s.devices_by_kind[DeviceKind::fabric_plane];
  s.links = g.link_count() - s.links_by_kind[LinkKind::bundle];
  s.gpu_nvlink = t.node().gpu_nvlink_capacity();
  s.node_gpu_bisection = t.node().gpu_bisection();
  if (const NetworkFabric* f = t.fabric()) {
    s.node_injection_line = f->nic_line_rate() * static_cast<double>(t.node().nics());
    s.node_injection = Bandwidth(0);
    // Each NIC injects what the network gives it, or what its PCIe path to host memory carries
    // where that is less (the warning Topology prints for such NICs): the sum is what the node
    // can put on the wire, not the NICs' nameplate.
    const Bandwidth net_rate = f->nic_line_rate() * t.network().efficiency;
    for (int n = 0; n < t.node().nics(); ++n) {
      const DeviceId nic = t.node().nic(n);
      const Bandwidth pcie = t.node().to_memory(nic, t.node().socket_of(nic)).bandwidth;
      s.node_injection += std::min(net_rate, pcie);
      s.injection_pcie_capped = s.injection_pcie_capped || pcie < net_rate;
    }
    s.bisection_line = f->bisection_line();
    s.bisection = f->bisection_achievable();
    s.fabric = f->shape();
  }

  // One example per class, always starting from GPU 0 so the examples are stable.
  const int gpn = t.gpus_per_node();
  if (gpn > 1) s.classes.push_back({"same node", 0, 1, t.route_gpus(0, 1)});
  if (t.nodes() > 1 && t.fabric() != nullptr) {
    const NetworkFabric& f = *t.fabric();
    const int r0 = t.node().nic_of_gpu(0);
    std::vector<std::string> seen;
    // Same-rail partners on other nodes, then a different-rail partner on node 1.
    auto consider = [&](long node, int local) {
      const int r = t.node().nic_of_gpu(local);
      const std::string c = class_of(f, 0, r0, node, r);
      for (const auto& x : seen) {
        if (x == c) return;
      }
      seen.push_back(c);
      const long dst = node * gpn + local;
      s.classes.push_back({c, 0, dst, t.route_gpus(0, dst)});
    };
    const long limit = std::min<long>(t.nodes(), 1'000'000);
    for (long n = 1; n < limit && seen.size() < 3; n = n < 64 ? n + 1 : n * 2) consider(n, 0);
    consider(t.nodes() - 1, 0);
    if (gpn > 1) {
      const int r_other = t.node().nic_of_gpu(gpn - 1);
      if (r_other != r0) {
        const long dst = 1L * gpn + gpn - 1;
        const std::string c = class_of(f, 0, r0, 1, r_other) + ", other rail";
        s.classes.push_back({c, 0, dst, t.route_gpus(0, dst)});
      }
    }
  }
  return s;
}

}  // namespace gf::topo
