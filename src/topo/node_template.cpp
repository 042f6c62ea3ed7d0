#include "topo/node_template.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace gf::topo {

namespace {

int rank_of(PathType t) {
  switch (t) {
    case PathType::self: return 0;
    case PathType::nvlink: return 1;
    case PathType::pix: return 2;
    case PathType::pxb: return 3;
    case PathType::phb: return 4;
    case PathType::node: return 5;
    case PathType::sys: return 6;
    case PathType::net: return 7;
  }
  return 8;
}

// "cpu1" -> 1, anything else -> -1
int socket_index(const std::string& name) {
  if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) return -1;
  int v = 0;
  for (std::size_t i = 3; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    v = v * 10 + (name[i] - '0');
    if (v > 1000) return -1;
  }
  return v;
}

}  // namespace

DeviceId NodeTemplate::add(DeviceKind kind, int index, int socket) {
  Device d;
  d.kind = kind;
  d.index = index;
  d.socket = static_cast<std::int16_t>(socket);
  d.node = 0;
  const DeviceId id = local_.add_device(d);
  tree_.resize(local_.device_count());
  return id;
}

NodeTemplate::NodeTemplate(const ClusterSpec& spec, const hw::Catalog& catalog) {
  const NodeDesign& n = spec.node;
  const auto& gpu = catalog.gpu(n.gpu, n.gpu_where, "node.gpu");
  const auto& cpu = catalog.cpu(n.cpu, n.cpu_where, "node.cpu");

  pcie_p2p_allowed_ = gpu.p2p_supported || spec.p2p_patched_driver;
  staging_efficiency_ = catalog.host_staging().efficiency;

  // Sockets and their memory.
  for (int s = 0; s < n.sockets; ++s) {
    cpu_.push_back(add(DeviceKind::cpu, s, s));
    mem_.push_back(add(DeviceKind::memory, s, s));
    const Bandwidth line = cpu.memory_bandwidth;
    // DRAM latency is left out of path latency: DMA engines pipeline it away for the copy
    // sizes this model is about.
    mem_link_.push_back(local_.add_duplex(cpu_.back(), mem_.back(), line, line * cpu.stream_efficiency, Seconds(0),
                                          Seconds(0), LinkKind::memory, cpu.memory_channels));
  }
  socket_link_.assign(static_cast<std::size_t>(n.sockets), std::vector<LinkId>(static_cast<std::size_t>(n.sockets), 0));
  socket_peer_link_ = socket_link_;
  if (n.sockets > 1) {
    if (!cpu.socket_link) {
      throw InputError(n.cpu_where, "node.sockets",
                       "CPU '" + cpu.name + "' has no socket interconnect in the catalog, so it cannot run " +
                           std::to_string(n.sockets) + " sockets",
                       "sockets: 1, or a multi-socket CPU");
    }
    for (int s = 0; s < n.sockets; ++s) {
      for (int t = s + 1; t < n.sockets; ++t) {
        // Device traffic (DMA to the other socket's memory, peer traffic) reaches only the link's
        // device rate where the catalog gives one (QPI-era parts), not its CPU-to-CPU rate.
        const Bandwidth achievable =
            cpu.socket_link_device ? std::min(*cpu.socket_link_device, *cpu.socket_link) : *cpu.socket_link;
        const LinkId id =
            local_.add_duplex(cpu_[static_cast<std::size_t>(s)], cpu_[static_cast<std::size_t>(t)], *cpu.socket_link,
                              achievable, cpu.socket_link_latency, cpu.socket_link_latency, LinkKind::socket, 0);
        socket_link_[static_cast<std::size_t>(s)][static_cast<std::size_t>(t)] = id;
        socket_link_[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)] = id + 1;
        // Peer-to-peer traffic between devices on the two sockets reaches only the CPU's peer
        // rate where the catalog gives one (Intel's UPI); a link of its own, on the same wires,
        // so that it caps the peer routes without capping DMA to the other socket's memory.
        LinkId peer = id;
        if (cpu.socket_link_peer) {
          peer = local_.add_duplex(cpu_[static_cast<std::size_t>(s)], cpu_[static_cast<std::size_t>(t)],
                                   *cpu.socket_link, std::min(*cpu.socket_link_peer, achievable),
                                   cpu.socket_link_latency, cpu.socket_link_latency, LinkKind::socket, 0);
        }
        socket_peer_link_[static_cast<std::size_t>(s)][static_cast<std::size_t>(t)] = peer;
        socket_peer_link_[static_cast<std::size_t>(t)][static_cast<std::size_t>(s)] = peer + 1;
      }
    }
  }

  // PCIe switches: resolve parents, reject unknown parents and cycles, add parents first.
  std::map<std::string, std::size_t> sw_index;
  for (std::size_t i = 0; i < n.pcie_switches.size(); ++i) {
    const auto& sw = n.pcie_switches[i];
    if (socket_index(sw.name) >= 0 || !sw_index.emplace(sw.name, i).second) {
      throw InputError(sw.where, "node.pcie_switches[" + std::to_string(i) + "].name",
                       "PCIe switch name '" + sw.name + "' is " +
                           (socket_index(sw.name) >= 0 ? "reserved for a socket" : "used twice"),
                       "a unique name not of the form cpuN");
    }
  }
  std::vector<std::string> valid_parents;
  for (int s = 0; s < n.sockets; ++s) valid_parents.push_back("cpu" + std::to_string(s));
  for (const auto& sw : n.pcie_switches) valid_parents.push_back(sw.name);
  auto check_parent = [&](const std::string& parent, const SourceLocation& where, const std::string& field) {
    const int s = socket_index(parent);
    if (s >= 0 && s < n.sockets) return;
    if (sw_index.count(parent)) return;
    const std::string hint = suggest(parent, valid_parents);
    throw InputError(where, field,
                     "parent '" + parent + "' is not a PCIe switch or socket of this node" +
                         (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                     join(valid_parents));
  };
  // Every parent named first: the chain walk below follows parents of other switches.
  for (std::size_t i = 0; i < n.pcie_switches.size(); ++i)
    check_parent(n.pcie_switches[i].parent, n.pcie_switches[i].where,
                 "node.pcie_switches[" + std::to_string(i) + "].parent");
  for (std::size_t i = 0; i < n.pcie_switches.size(); ++i) {
    const auto& sw = n.pcie_switches[i];
    std::vector<std::string> chain{sw.name};
    std::string p = sw.parent;
    while (socket_index(p) < 0) {
      chain.push_back(p);
      if (p == sw.name || chain.size() > n.pcie_switches.size() + 1) {
        throw InputError(sw.where, "node.pcie_switches[" + std::to_string(i) + "].parent",
                         "the PCIe tree has a cycle: " + join(chain, " -> "),
                         "each switch's parent chain must end at a socket (cpu0, cpu1, ...)");
      }
      p = n.pcie_switches[sw_index.at(p)].parent;
    }
  }
  std::map<std::string, DeviceId> sw_dev;
  std::map<std::string, int> sw_gen;
  int next_host_bridge = 1 << 20;  // implicit host bridges get ids no file uses
  auto parent_device = [&](const std::string& parent) -> std::pair<DeviceId, int> {
    const int s = socket_index(parent);
    if (s >= 0) return {cpu_[static_cast<std::size_t>(s)], cpu.pcie.generation};
    return {sw_dev.at(parent), sw_gen.at(parent)};
  };
  auto attach = [&](DeviceId child, const std::string& parent, std::optional<int> host_bridge, hw::PcieLink link,
                    bool child_is_switch, double cap_limit) {
    const auto [pdev, pgen] = parent_device(parent);
    const int gen = std::min(link.generation, pgen);
    const auto& pg = catalog.pcie(gen);
    const bool parent_is_switch = local_.device(pdev).kind == DeviceKind::pcie_switch;
    const Bandwidth line = pg.line_rate(link.lanes);
    Bandwidth cap = line * pg.copy_efficiency;
    if (cap_limit > 0 && cap_limit < cap.value()) cap = Bandwidth(cap_limit);
    const Seconds up = pg.hop_latency + (child_is_switch ? pg.switch_latency : Seconds(0));
    const Seconds down = pg.hop_latency + (parent_is_switch ? pg.switch_latency : Seconds(0));
    TreeInfo& t = tree_[child];
    t.parent = pdev;
    t.uplink = local_.add_duplex(child, pdev, line, cap, up, down, LinkKind::pcie, link.lanes);
    t.host_bridge = host_bridge ? *host_bridge : next_host_bridge++;
  };
  // The link a device trained: the lower of its own width and generation and the slot's.
  auto trained = [&](hw::PcieLink own, const Attachment& at, const std::string& field) {
    if (at.generation) {
      catalog.pcie(*at.generation, at.where, field + ".generation");
      own.generation = std::min(own.generation, *at.generation);
    }
    if (at.lanes) own.lanes = std::min(own.lanes, *at.lanes);
    return own;
  };
  std::set<std::string> added;
  while (added.size() < n.pcie_switches.size()) {
    for (const auto& sw : n.pcie_switches) {
      if (added.count(sw.name)) continue;
      if (socket_index(sw.parent) < 0 && !added.count(sw.parent)) continue;
      const int socket =
          socket_index(sw.parent) >= 0 ? socket_index(sw.parent) : local_.device(sw_dev.at(sw.parent)).socket;
      const DeviceId d = add(DeviceKind::pcie_switch, static_cast<int>(pcie_switch_.size()), socket);
      pcie_switch_.push_back(d);
      attach(d, sw.parent, sw.host_bridge, {sw.generation, sw.lanes}, true, 0);
      sw_dev[sw.name] = d;
      sw_gen[sw.name] = sw.generation;
      added.insert(sw.name);
    }
  }
  auto socket_of_parent = [&](const std::string& parent) {
    const int s = socket_index(parent);
    return s >= 0 ? s : local_.device(sw_dev.at(parent)).socket;
  };

  // GPUs.
  for (int i = 0; i < n.gpus; ++i) {
    const auto& at = n.gpu_parents[static_cast<std::size_t>(i)];
    check_parent(at.parent, at.where, "node.gpu_parents[" + std::to_string(i) + "]");
    gpu_.push_back(add(DeviceKind::gpu, i, socket_of_parent(at.parent)));
    attach(gpu_.back(), at.parent, at.host_bridge, trained(gpu.pcie, at, "node.gpu_parents[" + std::to_string(i) + "]"),
           false, 0);
  }

  // NVLink.
  mesh_link_.assign(static_cast<std::size_t>(n.gpus), std::vector<int>(static_cast<std::size_t>(n.gpus), -1));
  mesh_links_.assign(static_cast<std::size_t>(n.gpus), std::vector<int>(static_cast<std::size_t>(n.gpus), 0));
  if (n.gpu_fabric == GpuFabric::nvswitch) {
    const auto& sw = catalog.nvswitch(n.nvswitch_generation, n.nvswitch_where, "node.nvswitch.generation");
    if (gpu.nvlink->generation != sw.nvlink_generation) {
      throw InputError(n.nvswitch_where, "node.nvswitch.generation",
                       "NVSwitch generation " + std::to_string(sw.generation) + " has NVLink " +
                           std::to_string(sw.nvlink_generation) + " ports but GPU '" + gpu.name + "' has NVLink " +
                           std::to_string(gpu.nvlink->generation),
                       "an NVSwitch generation with NVLink " + std::to_string(gpu.nvlink->generation) + " ports");
    }
    if (sw.ports * n.nvswitch_count < gpu.nvlink->links * n.gpus) {
      throw InputError(n.nvswitch_where, "node.nvswitch.count",
                       std::to_string(n.nvswitch_count) + " switches of " + std::to_string(sw.ports) +
                           " ports cannot take " + std::to_string(gpu.nvlink->links * n.gpus) + " GPU NVLinks",
                       "more switches or fewer GPUs");
    }
    const auto& nv = catalog.nvlink(gpu.nvlink->generation);
    nvswitch_ = add(DeviceKind::nvswitch, 0, -1);
    nvswitch_sharp_ = sw.nvls;
    gpu_nvlinks_ = gpu.nvlink->links;
    const Bandwidth per_link = gpu.nvlink->link_rate ? *gpu.nvlink->link_rate : nv.link_rate;
    const Bandwidth line = per_link * static_cast<double>(gpu_nvlinks_);
    gpu_nvlink_capacity_ = line * nv.efficiency;
    for (int i = 0; i < n.gpus; ++i) {
      gpu_nvswitch_link_.push_back(local_.add_duplex(gpu_[static_cast<std::size_t>(i)], nvswitch_, line,
                                                     gpu_nvlink_capacity_, nv.hop_latency, nv.hop_latency + sw.latency,
                                                     LinkKind::nvlink, gpu_nvlinks_));
    }
  } else if (n.gpu_fabric == GpuFabric::nvlink_mesh) {
    std::vector<int> used(static_cast<std::size_t>(n.gpus), 0);
    Bandwidth per_link;
    double eff = 1.0;
    Seconds lat;
    if (gpu.nvlink->generation > 0) {
      const auto& nv = catalog.nvlink(gpu.nvlink->generation);
      // A GPU entry may set its own per-link rate (bridged GeForce NVLink runs slower).
      per_link = gpu.nvlink->link_rate ? *gpu.nvlink->link_rate : nv.link_rate;
      eff = nv.efficiency;
      lat = nv.hop_latency;
    } else {
      per_link = *gpu.nvlink->link_rate;  // xGMI: rate from the GPU entry, no measured efficiency
    }
    for (const auto& e : n.nvlink_mesh) {
      auto& slot = mesh_link_[static_cast<std::size_t>(e.a)][static_cast<std::size_t>(e.b)];
      if (slot >= 0) {
        throw InputError(e.where, "node.nvlink_mesh",
                         "GPUs " + std::to_string(e.a) + " and " + std::to_string(e.b) + " are listed twice",
                         "one entry per GPU pair, with its link count");
      }
      for (int g : {e.a, e.b}) {
        used[static_cast<std::size_t>(g)] += e.links;
        if (used[static_cast<std::size_t>(g)] > gpu.nvlink->links) {
          throw InputError(e.where, "node.nvlink_mesh",
                           "GPU " + std::to_string(g) + " would use " +
                               std::to_string(used[static_cast<std::size_t>(g)]) + " NVLinks but '" + gpu.name +
                               "' has " + std::to_string(gpu.nvlink->links),
                           "at most " + std::to_string(gpu.nvlink->links) + " links per GPU");
        }
      }
      const Bandwidth line = per_link * static_cast<double>(e.links);
      const LinkId id = local_.add_duplex(gpu_[static_cast<std::size_t>(e.a)], gpu_[static_cast<std::size_t>(e.b)],
                                          line, line * eff, lat, lat, LinkKind::nvlink, e.links);
      slot = static_cast<int>(id);
      mesh_link_[static_cast<std::size_t>(e.b)][static_cast<std::size_t>(e.a)] = static_cast<int>(id + 1);
      mesh_links_[static_cast<std::size_t>(e.a)][static_cast<std::size_t>(e.b)] = e.links;
      mesh_links_[static_cast<std::size_t>(e.b)][static_cast<std::size_t>(e.a)] = e.links;
    }
    gpu_nvlinks_ = gpu.nvlink->links;
    gpu_nvlink_capacity_ = per_link * static_cast<double>(gpu.nvlink->links) * eff;
  }

  // NICs and storage.
  for (std::size_t i = 0; i < n.nics.size(); ++i) {
    const auto& p = n.nics[i];
    check_parent(p.at.parent, p.at.where, "node.nics[" + std::to_string(i) + "].parent");
    const auto& nic = catalog.nic(p.model);
    for (int c = 0; c < p.count; ++c) {
      nic_.push_back(add(DeviceKind::nic, static_cast<int>(nic_.size()), socket_of_parent(p.at.parent)));
      attach(nic_.back(), p.at.parent, p.at.host_bridge,
             trained(nic.pcie, p.at, "node.nics[" + std::to_string(i) + "]"), false, 0);
    }
  }
  for (std::size_t i = 0; i < n.storage.size(); ++i) {
    const auto& p = n.storage[i];
    check_parent(p.at.parent, p.at.where, "node.storage[" + std::to_string(i) + "].parent");
    const auto& st = catalog.storage(p.model);
    for (int c = 0; c < p.count; ++c) {
      storage_.push_back(add(DeviceKind::storage, static_cast<int>(storage_.size()), socket_of_parent(p.at.parent)));
      // SATA and network storage have no PCIe link of their own; their controller path is
      // modelled as a Gen3 x4 attachment limited by the device's own rate.
      const hw::PcieLink link =
          trained(st.pcie ? *st.pcie : hw::PcieLink{3, 4}, p.at, "node.storage[" + std::to_string(i) + "]");
      attach(storage_.back(), p.at.parent, p.at.host_bridge, link, false, st.read.value());
      const LinkId up = tree_[storage_.back()].uplink;
      local_.mutable_link(up + 1).capacity = std::min(local_.link(up + 1).capacity, st.write);
    }
  }
  trace_routes();
  assign_nics_to_gpus();
}

void NodeTemplate::trace_routes() {
  // The node's links are final here: trace the GPU<->NIC and GPU<->GPU paths once.
  gpu_index_.assign(local_.devices().size(), -1);
  nic_index_.assign(local_.devices().size(), -1);
  for (std::size_t g = 0; g < gpu_.size(); ++g) gpu_index_[gpu_[g]] = static_cast<int>(g);
  for (std::size_t k = 0; k < nic_.size(); ++k) nic_index_[nic_[k]] = static_cast<int>(k);
  std::vector<Route> to_nic, to_gpu;
  for (const DeviceId g : gpu_)
    for (const DeviceId k : nic_) to_nic.push_back(trace_pcie_path(g, k));
  for (const DeviceId k : nic_)
    for (const DeviceId g : gpu_) to_gpu.push_back(trace_pcie_path(k, g));
  gpu_to_nic_ = std::move(to_nic);
  nic_to_gpu_ = std::move(to_gpu);
  std::vector<Route> pairs;
  for (const bool p2p : {false, true})
    for (int a = 0; a < gpus(); ++a)
      for (int b = 0; b < gpus(); ++b) pairs.push_back(trace_gpu_to_gpu(a, b, p2p));
  gpu_to_gpu_ = std::move(pairs);
}

void NodeTemplate::assign_nics_to_gpus() {
  nic_of_gpu_.assign(gpu_.size(), -1);
  if (nic_.empty()) return;
  std::vector<int> load(nic_.size(), 0);
  for (std::size_t g = 0; g < gpu_.size(); ++g) {
    int best = -1;
    int best_rank = 1 << 30;
    for (std::size_t k = 0; k < nic_.size(); ++k) {
      const int r = rank_of(pcie_path(gpu_[g], nic_[k]).type);
      if (r < best_rank || (r == best_rank && load[k] < load[static_cast<std::size_t>(best)])) {
        best = static_cast<int>(k);
        best_rank = r;
      }
    }
    nic_of_gpu_[g] = best;
    ++load[static_cast<std::size_t>(best)];
  }
  near_nics_.assign(gpu_.size(), {});
  for (std::size_t g = 0; g < gpu_.size(); ++g) {
    const int best = nic_of_gpu_[g];
    const int best_rank = rank_of(pcie_path(gpu_[g], nic_[static_cast<std::size_t>(best)]).type);
    auto& near = near_nics_[g];
    near.push_back(best);
    for (std::size_t k = 0; k < nic_.size(); ++k) {
      if (static_cast<int>(k) != best && rank_of(pcie_path(gpu_[g], nic_[k]).type) == best_rank) {
        near.push_back(static_cast<int>(k));
      }
    }
  }
}

void NodeTemplate::instantiate(Graph& g, std::int32_t node) const {
  const DeviceId dev_offset = static_cast<DeviceId>(node) * devices_per_node();
  for (const Device& d : local_.devices()) {
    Device copy = d;
    copy.node = node;
    g.add_device(copy);
  }
  for (const Link& l : local_.links()) {
    Link copy = l;
    copy.src += dev_offset;
    copy.dst += dev_offset;
    g.append_link(copy);
  }
}

DeviceId NodeTemplate::socket_device(DeviceId d) const {
  return cpu_[static_cast<std::size_t>(local_.device(d).socket)];
}

DeviceId NodeTemplate::top_attachment(DeviceId d) const {
  while (tree_[d].parent != kNone && local_.device(tree_[d].parent).kind != DeviceKind::cpu) d = tree_[d].parent;
  return d;
}

void NodeTemplate::append_up(DeviceId from, DeviceId stop, std::vector<LinkId>& out) const {
  for (DeviceId d = from; d != stop; d = tree_[d].parent) out.push_back(tree_[d].uplink);
}

void NodeTemplate::append_cross_socket(int from, int to, std::vector<LinkId>& out, bool peer) const {
  const auto& links = peer ? socket_peer_link_ : socket_link_;
  if (from != to) out.push_back(links[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)]);
}

Route NodeTemplate::pcie_path(DeviceId a, DeviceId b) const {
  if (!gpu_to_nic_.empty()) {
    if (gpu_index_[a] >= 0 && nic_index_[b] >= 0) return gpu_nic_path(gpu_index_[a], nic_index_[b]);
    if (nic_index_[a] >= 0 && gpu_index_[b] >= 0) return nic_gpu_path(nic_index_[a], gpu_index_[b]);
  }
  return trace_pcie_path(a, b);
}

Route NodeTemplate::trace_pcie_path(DeviceId a, DeviceId b) const {
  Route r;
  r.transport = Transport::pcie_p2p;
  if (a == b) {
    r.type = PathType::self;
    r.transport = Transport::local;
    measure(r, local_);
    return r;
  }
  std::vector<DeviceId> up_a;  // switches above a
  for (DeviceId d = tree_[a].parent; d != kNone && local_.device(d).kind == DeviceKind::pcie_switch;
       d = tree_[d].parent) {
    up_a.push_back(d);
  }
  DeviceId lca = kNone;
  int switches_b = 0;
  for (DeviceId d = tree_[b].parent; d != kNone && local_.device(d).kind == DeviceKind::pcie_switch;
       d = tree_[d].parent) {
    ++switches_b;
    if (std::find(up_a.begin(), up_a.end(), d) != up_a.end()) {
      lca = d;
      break;
    }
  }
  std::vector<LinkId> down;
  if (lca != kNone) {
    append_up(a, lca, r.links);
    append_up(b, lca, down);
    const int switches_a = static_cast<int>(std::find(up_a.begin(), up_a.end(), lca) - up_a.begin());
    r.type = switches_a + switches_b == 1 ? PathType::pix : PathType::pxb;
  } else {
    const int sa = local_.device(a).socket;
    const int sb = local_.device(b).socket;
    append_up(a, socket_device(a), r.links);
    if (sa != sb) r.links.push_back(socket_peer_link_[static_cast<std::size_t>(sa)][static_cast<std::size_t>(sb)]);
    append_up(b, socket_device(b), down);
    if (sa != sb) {
      r.type = PathType::sys;
    } else {
      r.type =
          tree_[top_attachment(a)].host_bridge == tree_[top_attachment(b)].host_bridge ? PathType::phb : PathType::node;
    }
  }
  for (auto it = down.rbegin(); it != down.rend(); ++it) r.links.push_back(*it + 1);
  measure(r, local_);
  return r;
}

Route NodeTemplate::memory_route(DeviceId endpoint, int socket, bool towards_memory, bool sm_driven) const {
  Route r;
  r.transport = Transport::pcie_dma;
  const int own = local_.device(endpoint).socket;
  r.type = own == socket ? PathType::phb : PathType::sys;
  const LinkId mem = mem_link_[static_cast<std::size_t>(socket)];
  if (towards_memory) {
    append_up(endpoint, socket_device(endpoint), r.links);
    append_cross_socket(own, socket, r.links, sm_driven);
    r.links.push_back(mem);
  } else {
    r.links.push_back(mem + 1);
    append_cross_socket(socket, own, r.links, sm_driven);
    std::vector<LinkId> up;
    append_up(endpoint, socket_device(endpoint), up);
    for (auto it = up.rbegin(); it != up.rend(); ++it) r.links.push_back(*it + 1);
  }
  measure(r, local_);
  return r;
}

Route NodeTemplate::to_memory(DeviceId from, int socket, bool sm_driven) const {
  return memory_route(from, socket, true, sm_driven);
}
Route NodeTemplate::from_memory(int socket, DeviceId to, bool sm_driven) const {
  return memory_route(to, socket, false, sm_driven);
}

Route NodeTemplate::trace_gpu_to_gpu(int a, int b, bool p2p) const {
  const DeviceId da = gpu_[static_cast<std::size_t>(a)];
  const DeviceId db = gpu_[static_cast<std::size_t>(b)];
  Route r;
  if (a == b) {
    r.type = PathType::self;
    r.transport = Transport::local;
    measure(r, local_);
    return r;
  }
  if (p2p && nvswitch_ != kNone) {
    r.links = {gpu_nvswitch_link_[static_cast<std::size_t>(a)], gpu_nvswitch_link_[static_cast<std::size_t>(b)] + 1};
    r.type = PathType::nvlink;
    r.nvlinks = gpu_nvlinks_;
    r.transport = Transport::nvlink;
    measure(r, local_);
    return r;
  }
  const int mesh = mesh_link_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
  if (p2p && mesh >= 0) {
    r.links = {static_cast<LinkId>(mesh)};
    r.type = PathType::nvlink;
    r.nvlinks = mesh_links_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
    r.transport = Transport::nvlink;
    measure(r, local_);
    return r;
  }
  Route pcie = pcie_path(da, db);
  if (p2p && pcie_p2p_allowed_) return pcie;
  // Staged: a writes into a bounce buffer in its own socket's memory, b reads it from there.
  const int s = local_.device(da).socket;
  Route staged = to_memory(da, s);
  const Route second = from_memory(s, db);
  staged.links.insert(staged.links.end(), second.links.begin(), second.links.end());
  staged.type = pcie.type;
  staged.transport = Transport::host_staged;
  measure(staged, local_);
  staged.bandwidth = staged.bandwidth * staging_efficiency_;
  return staged;
}

Bandwidth NodeTemplate::gpu_bisection() const {
  const std::size_t n = gpu_.size();
  if (n < 2) return Bandwidth(0);
  if (nvswitch_ != kNone) return gpu_nvlink_capacity_ * static_cast<double>(n / 2);
  // Minimum over balanced bipartitions of the capacity crossing between the halves, counting
  // NVLink edges directly and the PCIe tree through the socket links or root complexes.
  if (n > 16) return Bandwidth(0);
  double best = -1;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcount(mask)) != n / 2 || !(mask & 1u)) continue;
    double cross = 0;
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) {
        const bool ia = (mask >> a) & 1u;
        const bool ib = (mask >> b) & 1u;
        if (!ia || ib) continue;
        const int m = mesh_link_[a][b];
        if (m >= 0) cross += local_.link(static_cast<LinkId>(m)).capacity.value();
      }
    }
    // PCIe: each GPU on one side can send over its own uplink; bounded per socket pair by the
    // socket link when the halves sit on different sockets.
    double pcie_out = 0;
    double pcie_in = 0;
    for (std::size_t a = 0; a < n; ++a) {
      const double up = local_.link(tree_[gpu_[a]].uplink).capacity.value();
      ((mask >> a) & 1u ? pcie_out : pcie_in) += up;
    }
    double pcie = std::min(pcie_out, pcie_in);
    if (cpu_.size() > 1) {
      bool spans = false;
      for (std::size_t a = 0; a < n && !spans; ++a) {
        for (std::size_t b = 0; b < n && !spans; ++b) {
          spans = ((mask >> a) & 1u) && !((mask >> b) & 1u) &&
                  local_.device(gpu_[a]).socket != local_.device(gpu_[b]).socket;
        }
      }
      if (spans) pcie = std::min(pcie, local_.link(socket_peer_link_[0][1]).capacity.value() * 1.0);
    }
    cross += pcie;
    if (best < 0 || cross < best) best = cross;
  }
  return Bandwidth(best);
}

}  // namespace gf::topo
