#include "topo/topology.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/mix.hpp"

namespace gf::topo {

Topology::Topology(ClusterSpec spec, const hw::Catalog& catalog) : spec_(std::move(spec)) {
  gpu_ = catalog.gpu(spec_.node.gpu, spec_.node.gpu_where, "node.gpu");
  cpu_ = catalog.cpu(spec_.node.cpu, spec_.node.cpu_where, "node.cpu");
  node_ = std::make_unique<NodeTemplate>(spec_, catalog);
  const long gpus = spec_.nodes * node_->gpus();
  if (gpus > kMaxGpus) {
    throw InputError(spec_.nodes_from.where, spec_.nodes_from.field,
                     std::to_string(spec_.nodes) + " nodes of " + std::to_string(node_->gpus()) + " GPUs make " +
                         std::to_string(gpus) + " GPUs, more than gpufabric builds",
                     "at most " + std::to_string(kMaxGpus) + " GPUs");
  }
  network_ = catalog.network(spec_.network.tech, spec_.network.tech_where, "network.tech");
  switch_ =
      catalog.network_switch(spec_.network.switch_model.empty() ? network_.default_switch : spec_.network.switch_model,
                             spec_.network.switch_where, "network.switch");
  if (spec_.nodes > 1 && node_->nics() == 0) {
    throw InputError(spec_.nodes_from.where, spec_.nodes_from.field,
                     "the node design has no NICs, so its servers cannot be networked",
                     "--nodes 1, or a cluster file with nics:");
  }
  Bandwidth nic_rate(0);
  for (std::size_t i = 0; i < spec_.node.nics.size(); ++i) {
    const auto& nic = catalog.nic(spec_.node.nics[i].model);
    if (std::find(nic.families.begin(), nic.families.end(), network_.family) == nic.families.end()) {
      throw InputError(spec_.node.nics[i].at.where, "node.nics[" + std::to_string(i) + "].model",
                       "NIC '" + nic.name + "' cannot run network '" + network_.name + "' (" + network_.family + ")",
                       "a NIC whose families include " + network_.family + ", e.g. " + network_.default_nic);
    }
    nic_rate = i == 0 ? nic.max_rate : std::min(nic_rate, nic.max_rate);
    ll_protocols_ = ll_protocols_ && nic.ll_protocols;
  }
  // GPUDirect-TCPX(O) runs NCCL with NCCL_PROTO=Simple (Google's plugin configuration, as the
  // dstack A3 High guide's TCPX job environment lists it): no LL or LL128 between nodes.
  if (network_.transport == "tcpx") ll_protocols_ = false;
  if (node_->nics() > 0) plan_fabric(nic_rate);
  if (fabric_ && spec_.nodes > 1) warn_pcie_capped_nics();
  const std::size_t devices =
      static_cast<std::size_t>(spec_.nodes) * node_->devices_per_node() + (fabric_ ? fabric_->switch_count() : 0);
  const std::size_t links =
      static_cast<std::size_t>(spec_.nodes) * node_->links_per_node() + (fabric_ ? fabric_->link_count() : 0);
  graph_.reserve(devices, links);
  for (long n = 0; n < spec_.nodes; ++n) node_->instantiate(graph_, static_cast<std::int32_t>(n));
  if (fabric_) fabric_->build(graph_, [this](long n, int r) { return nic(n, r); });
}

void Topology::plan_fabric(Bandwidth nic_rate) {
  NetworkDesign& net = spec_.network;
  FabricOrigins from;
  from.nodes = spec_.nodes_from;
  const bool chosen = !net.fabric_from.field.empty();
  const bool shaped = !net.tiers_from.field.empty() || !net.oversubscription_from.field.empty();
  const long ports = spec_.nodes * node_->nics();
  const std::string port_text = std::to_string(ports) + " NIC ports";
  if (!chosen) {
    // The default: one switch when the ports fit, else the smallest non-blocking fat-tree. A
    // tier count or oversubscription given without a fabric asks for a fat-tree.
    net.fabric = !shaped && NetworkFabric::fits_one_switch(spec_.nodes, node_->nics(), switch_.radix)
                     ? FabricKind::single
                     : FabricKind::fat_tree;
    from.fabric = flag_origin("network.fabric");
  } else {
    from.fabric = net.fabric_from;
  }
  if (!net.tiers_from.field.empty()) from.tiers = net.tiers_from;
  if (!net.oversubscription_from.field.empty()) from.oversubscription = net.oversubscription_from;
  if (spec_.nodes > 1 && net.fabric == FabricKind::single && !net.tiers_from.field.empty()) {
    spec_.notes.push_back("warning: " + net.tiers_from.field + " is ignored: a single switch has one tier");
  }
  if (spec_.nodes > 1 && net.fabric == FabricKind::single && !net.oversubscription_from.field.empty()) {
    spec_.notes.push_back("warning: " + net.oversubscription_from.field +
                          " is ignored: a single switch is not oversubscribed");
  }
  fabric_.emplace(net.fabric, net.fabric == FabricKind::single ? 2 : net.tiers, net.oversubscription, switch_, network_,
                  nic_rate, spec_.nodes, node_->nics(), from);
  const FabricShape& s = fabric_->shape();
  if (spec_.nodes <= 1) return;
  if (!chosen) {
    if (s.tiers <= 1) {
      spec_.notes.push_back("fabric: one " + switch_.name + " switch (" + std::to_string(switch_.radix) +
                            " ports) holds the " + port_text +
                            " (default: a single switch when the ports fit, else the smallest non-blocking "
                            "fat-tree; --fabric to choose)");
    } else {
      spec_.notes.push_back("fabric: " + std::to_string(s.tiers) + "-tier " +
                            (s.oversubscription > 1.0 ? "" : std::string("non-blocking ")) + "fat-tree of " +
                            switch_.name + " switches, the smallest that holds the " + port_text +
                            " (default: a single switch when the ports fit; --fabric to choose)");
    }
  } else if (net.fabric != FabricKind::single && net.tiers == 0 && s.tiers >= 2) {
    spec_.notes.push_back(std::string("fabric: ") + std::to_string(s.tiers) + " tiers, the fewest that hold the " +
                          port_text + " (--tiers to choose)");
  }
  if (net.tiers != 0 && s.tiers != net.tiers && net.fabric != FabricKind::single) {
    spec_.notes.push_back("warning: " + net.tiers_from.field + " " + std::to_string(net.tiers) + " is not built: the " +
                          port_text + " fit on one leaf switch");
  }
  if (!net.oversubscription_from.field.empty() && net.fabric != FabricKind::single) {
    if (s.tiers <= 1) {
      spec_.notes.push_back("warning: " + net.oversubscription_from.field + " is ignored: the " + port_text +
                            " fit on one leaf switch");
    } else if (std::abs(s.oversubscription - net.oversubscription) > 1e-9) {
      spec_.notes.push_back(
          fmt::format("warning: {} {:g}:1 is built as {}:{} = {:.3g}:1, the nearest split of a "
                      "radix-{} leaf",
                      net.oversubscription_from.field, net.oversubscription, s.down_ports, s.up_ports,
                      s.oversubscription, s.radix));
    }
  }
  // The built fabric, so that reports read what was built rather than what was asked.
  if (s.tiers >= 2) net.tiers = s.tiers;
}

void Topology::warn_pcie_capped_nics() {
  // A NIC whose PCIe link (as it trained, under its parent) carries less than the network
  // gives it runs at its PCIe rate: every route through it is capped there. Said once per model.
  const Bandwidth net_rate = fabric_->nic_line_rate() * network_.efficiency;
  std::vector<std::string> said;
  int index = 0;
  for (const auto& p : spec_.node.nics) {
    for (int c = 0; c < p.count; ++c, ++index) {
      const DeviceId nic = node_->nic(index);
      const Bandwidth pcie = node_->to_memory(nic, node_->socket_of(nic)).bandwidth;
      if (pcie >= net_rate || std::find(said.begin(), said.end(), p.model) != said.end()) continue;
      said.push_back(p.model);
      spec_.notes.push_back(
          fmt::format("warning: NIC {}'s PCIe path carries {:.1f} GB/s, less than the {:.1f} GB/s "
                      "network {} gives it: it runs at its PCIe rate",
                      p.model, in_GBps(pcie), in_GBps(net_rate), network_.name));
    }
  }
}

DeviceId Topology::gpu(long global) const {
  const long n = global / node_->gpus();
  return static_cast<DeviceId>(n) * node_->devices_per_node() + node_->gpu(static_cast<int>(global % node_->gpus()));
}

DeviceId Topology::nic(long node, int nic) const {
  return static_cast<DeviceId>(node) * node_->devices_per_node() + node_->nic(nic);
}

// GPUDirect-TCPX(O) ("tcpx") moves the payload between NIC and GPU memory too.
bool Topology::gpudirect_active() const { return spec_.gpudirect && network_.transport != "tcp"; }

void Topology::append_shifted(const std::vector<LinkId>& local, long node, std::vector<LinkId>& out) const {
  const LinkId offset = static_cast<LinkId>(node) * node_->links_per_node();
  for (const LinkId id : local) out.push_back(id + offset);
}

Route Topology::shift(Route r, long node) const {
  const LinkId offset = static_cast<LinkId>(node) * node_->links_per_node();
  for (LinkId& id : r.links) id += offset;
  return r;
}

Route Topology::route_gpus(long a, long b, int channel, bool ideal_ecmp, bool gdr) const {
  const long g = node_->gpus();
  const long na = a / g;
  const long nb = b / g;
  const int ia = static_cast<int>(a % g);
  const int ib = static_cast<int>(b % g);
  if (na == nb) return shift(node_->gpu_route(ia, ib, spec_.p2p), na);

  const auto& near_a = node_->near_nics(ia);
  const auto& near_b = node_->near_nics(ib);
  const NetEnd from{near_a[static_cast<std::size_t>(channel) % near_a.size()], gdr, -1};
  const NetEnd to{near_b[static_cast<std::size_t>(channel) % near_b.size()], gdr, -1};
  return route_gpus(a, from, b, to, ideal_ecmp);
}

Route Topology::route_gpus(long a, NetEnd from, long b, NetEnd to, bool ideal_ecmp) const {
  const long g = node_->gpus();
  const long na = a / g;
  const long nb = b / g;
  const int ia = static_cast<int>(a % g);
  const int ib = static_cast<int>(b % g);
  Route r;
  r.type = PathType::net;
  r.transport = from.gdr && to.gdr ? Transport::gpudirect_rdma : Transport::host_bounce;
  const DeviceId gpu_a = node_->gpu(ia);
  const DeviceId gpu_b = node_->gpu(ib);
  const DeviceId nic_a = node_->nic(from.nic);
  const DeviceId nic_b = node_->nic(to.nic);
  if (from.proxy >= 0 && from.proxy != ia) {
    // PXN: over NVLink into the peer GPU's memory, from where its NIC reads it.
    r.transport = to.gdr ? Transport::pxn : Transport::host_bounce;
    append_shifted(node_->gpu_route(ia, from.proxy, true).links, na, r.links);
    append_shifted(node_->gpu_nic_path(from.proxy, from.nic).links, na, r.links);
  } else if (from.gdr) {
    append_shifted(node_->gpu_nic_path(ia, from.nic).links, na, r.links);
  } else {
    // Without GPUDirect the data is copied to host memory and sent from there by the NIC.
    const int sa = node_->socket_of(gpu_a);
    append_shifted(node_->to_memory(gpu_a, sa).links, na, r.links);
    append_shifted(node_->from_memory(sa, nic_a).links, na, r.links);
  }
  r.ecmp_paths = route_network(na, from.nic, nb, to.nic, a, b, ideal_ecmp, r.links);
  if (to.gdr) {
    append_shifted(node_->nic_gpu_path(to.nic, ib).links, nb, r.links);
  } else {
    // ... and copied up from host memory on the far side.
    const int sb = node_->socket_of(gpu_b);
    append_shifted(node_->to_memory(nic_b, sb).links, nb, r.links);
    append_shifted(node_->from_memory(sb, gpu_b).links, nb, r.links);
  }
  measure(r, graph_);
  return r;
}

int Topology::route_network(long na, int ra, long nb, int rb, long a, long b, bool ideal_ecmp,
                            std::vector<LinkId>& out) const {
  if (ideal_ecmp) {
    fabric_->route_bundled(na, ra, nb, rb, out);
    return fabric_->shape().up_ports > 0 ? fabric_->shape().up_ports : 1;
  }
  return fabric_->route(na, ra, nb, rb,
                        mix64(static_cast<std::uint64_t>(a) * 0x100000001ULL + static_cast<std::uint64_t>(b)), out);
}

Route Topology::route_gpu_to_memory(long gpu, int socket, bool sm_driven) const {
  const long n = gpu / node_->gpus();
  return shift(node_->to_memory(node_->gpu(static_cast<int>(gpu % node_->gpus())), socket, sm_driven), n);
}

Route Topology::route_memory_to_gpu(int socket, long gpu, bool sm_driven) const {
  const long n = gpu / node_->gpus();
  return shift(node_->from_memory(socket, node_->gpu(static_cast<int>(gpu % node_->gpus())), sm_driven), n);
}

Route Topology::route_gpu_to_nic(long gpu, int nic) const {
  const long n = gpu / node_->gpus();
  Route r = shift(node_->pcie_path(node_->gpu(static_cast<int>(gpu % node_->gpus())), node_->nic(nic)), n);
  r.transport = Transport::pcie_dma;
  return r;
}

Route Topology::route_nic_to_gpu(int nic, long gpu) const {
  const long n = gpu / node_->gpus();
  Route r = shift(node_->pcie_path(node_->nic(nic), node_->gpu(static_cast<int>(gpu % node_->gpus()))), n);
  r.transport = Transport::pcie_dma;
  return r;
}

}  // namespace gf::topo
