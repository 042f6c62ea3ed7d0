#include "comm/communicator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "core/error.hpp"

namespace gf::comm {

Communicator::Communicator(const topo::Topology& t, long ranks, NcclConfig env, const NcclParams* params)
    : t_(t), env_(std::move(env)), params_(params != nullptr ? params : &nccl_params()) {
  const long total = t.gpu_count();
  const int gpn = t.gpus_per_node();
  if (ranks == 0) ranks = total;
  if (ranks < 1 || ranks > total) {
    throw InputError({}, "--gpus", fmt::format("{} ranks asked for, but the cluster has {} GPUs", ranks, total),
                     fmt::format("1 to {} (or more --nodes)", total));
  }
  if (ranks <= gpn && t.nodes() == 1) {
    nodes_ = 1;
    ppn_ = static_cast<int>(ranks);
  } else {
    nodes_ = t.nodes();
    if (ranks % nodes_ != 0 || ranks / nodes_ > gpn) {
      throw InputError({}, "--gpus",
                       fmt::format("{} ranks cannot be spread evenly over {} nodes of {} GPUs", ranks, nodes_, gpn),
                       fmt::format("a multiple of {} up to {}, or set --nodes to the nodes you use", nodes_, total));
    }
    ppn_ = static_cast<int>(ranks / nodes_);
  }
  ranks_ = ranks;
  gpus_.resize(static_cast<std::size_t>(ranks));
  for (long r = 0; r < ranks; ++r) gpus_[static_cast<std::size_t>(r)] = (r / ppn_) * gpn + r % ppn_;
  finish();
}

Communicator::Communicator(const topo::Topology& t, std::vector<long> gpus, NcclConfig env, const NcclParams* params)
    : t_(t), env_(std::move(env)), params_(params != nullptr ? params : &nccl_params()) {
  const long total = t.gpu_count();
  const int gpn = t.gpus_per_node();
  if (gpus.empty()) throw InputError({}, "gpus", "an empty GPU list", "one GPU index or more");
  std::sort(gpus.begin(), gpus.end());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] < 0 || gpus[i] >= total) {
      throw InputError({}, "gpus", fmt::format("GPU {} is not in the cluster", gpus[i]),
                       fmt::format("0 to {}", total - 1));
    }
    if (i > 0 && gpus[i] == gpus[i - 1]) {
      throw InputError({}, "gpus", fmt::format("GPU {} is listed twice", gpus[i]), "each GPU once");
    }
  }
  // Ranks per node: every node in the list must hold the same count.
  std::map<long, int> per_node;
  for (const long g : gpus) ++per_node[g / gpn];
  const int ppn = per_node.begin()->second;
  for (const auto& [node, n] : per_node) {
    if (n != ppn) {
      throw InputError(
          {}, "gpus",
          fmt::format("node {} holds {} of the GPUs and node {} holds {}", per_node.begin()->first, ppn, node, n),
          "the same number of GPUs on every node of the group");
    }
  }
  nodes_ = static_cast<long>(per_node.size());
  ppn_ = ppn;
  ranks_ = static_cast<long>(gpus.size());
  gpus_ = std::move(gpus);
  finish();
}

void Communicator::finish() {
  const auto& t = t_;

  const auto& nccl = *params_;
  const auto& gpu = t.gpu_spec();
  const int nvgen = gpu.nvlink && gpu.nvlink->generation > 0 ? gpu.nvlink->generation : 0;
  if (const auto eff = nccl.nvlink_efficiency.find(nvgen); eff != nccl.nvlink_efficiency.end()) {
    nvlink_efficiency_ = eff->second;
  }
  // A calibration's network efficiency, where it was fitted on this network.
  const bool calibrated_net = nccl.network_efficiency &&
                              (nccl.network_efficiency_for.empty() || nccl.network_efficiency_for == t.network().name);
  net_scale_ = calibrated_net ? *nccl.network_efficiency / t.network().efficiency : 1.0;
  apply_network_profile();
  choose_transports();
  nvlink_intra_ = ppn_ > 1;
  for (int a = 0; a < ppn_ && nvlink_intra_; ++a) {
    for (int b = 0; b < ppn_ && nvlink_intra_; ++b) {
      if (a != b) {
        nvlink_intra_ = transport(a, b) == NcclTransport::p2p &&
                        (t.node().gpu_to_gpu(local_gpu(a), local_gpu(b), true).transport == topo::Transport::nvlink ||
                         intra_via_[static_cast<std::size_t>(a * ppn_ + b)] >= 0);
      }
    }
  }
  // NVLink SHARP needs the GPUs' P2P (it maps their memory through the switch).
  bool all_p2p = true;
  for (const auto tr : intra_transport_) all_p2p = all_p2p && tr == NcclTransport::p2p;
  nvls_ = t.node().nvswitch_sharp() && all_p2p && ppn_ > 1 && !env_.nvls_disable;
  sharp_ = t.network_switch().sharp && t.network().family == "infiniband";
  // NCCL's compCapIndex: sm < 80 Volta, < 90 Ampere, < 100 Hopper, else Blackwell. A GPU
  // without a compute capability (not NVIDIA) is given Hopper's tables.
  const int cc = gpu.compute_capability;
  generation_ = cc == 0    ? GpuGeneration::hopper
                : cc < 80  ? GpuGeneration::volta
                : cc < 90  ? GpuGeneration::ampere
                : cc < 100 ? GpuGeneration::hopper
                           : GpuGeneration::blackwell;
  amd_cpu_ = t.cpu_spec().name.find("epyc") != std::string::npos ||
             t.cpu_spec().name.find("threadripper") != std::string::npos;
  channels_hint_ = gpu.nvlink ? std::clamp(gpu.nvlink->links, 2, 32) : 2;
  search_intra_ring();
}

void Communicator::apply_network_profile() {
  // Only ranks that talk across the network run under the network's setup: one node's jobs do
  // not need the plugin's variables.
  const auto& profile = t_.network().nccl_env;
  if (nodes_ < 2 || profile.empty()) return;
  std::vector<std::string> applied;
  for (const auto& v : profile) {
    if (sets(env_, v.name)) continue;  // the user's own setting wins
    std::vector<std::string> ignored;
    apply_nccl_variable(env_, v.name, v.value, v.where, v.field, &ignored);
    applied.push_back(v.name + "=" + v.value);
  }
  if (!applied.empty()) {
    std::string list;
    for (const auto& a : applied) list += (list.empty() ? "" : " ") + a;
    notes_.push_back(fmt::format("{}'s NCCL setup sets {} (as its vendor's job profile exports; --env overrides)",
                                 t_.network().name, list));
  }
}

void Communicator::choose_transports() {
  const auto& node = t_.node();
  const auto& gpu = t_.gpu_spec();
  // The driver's word on P2P (NVML's p2pStatus): off when the cluster says so, and always off
  // on GPUs whose driver refuses it (GeForce), whatever the cluster file asks for.
  const bool driver_allows = gpu.p2p_supported || t_.spec().p2p_patched_driver;
  const bool driver_p2p = t_.spec().p2p && driver_allows;
  if (t_.spec().p2p && !driver_allows) {
    notes_.push_back(
        fmt::format("P2P stays off: the {} driver does not allow peer-to-peer, so NCCL uses SHM (host "
                    "memory) between these GPUs whatever p2p says",
                    gpu.name));
  }
  // NCCL's default P2P level is PXB (a common PCIe switch), SYS on AMD CPUs with at most two
  // GPUs (paths.cc, ncclTopoCheckP2p).
  const PathLevel p2p_level = env_.p2p_level.value_or(amd_cpu() && node.gpus() <= 2 ? PathLevel::sys : PathLevel::pxb);
  const auto n = static_cast<std::size_t>(ppn_);
  intra_transport_.assign(n * n, NcclTransport::p2p);
  intra_via_.assign(n * n, -1);
  for (int a = 0; a < ppn_; ++a) {
    for (int b = 0; b < ppn_; ++b) {
      if (a == b) continue;
      const topo::Route direct = node.gpu_to_gpu(local_gpu(a), local_gpu(b), true);
      bool p2p = driver_p2p && level_of(direct.type) <= p2p_level;
      // PATH_NVB (paths.cc, ncclTopoComputePaths): GPUs without an NVLink between them that
      // both have one to a third GPU of the communicator reach each other over NVLink through
      // it, a path NCCL ranks above any PCIe path (NVB sits between NVL and PIX, so any
      // NCCL_P2P_LEVEL from PIX up allows it); NCCL_DEBUG prints "P2P/indirect".
      const int via = direct.transport == topo::Transport::nvlink || !driver_p2p || p2p_level < PathLevel::pix
                          ? -1
                          : nvlink_intermediate(a, b);
      if (via >= 0) p2p = true;
      intra_transport_[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] =
          p2p ? NcclTransport::p2p : NcclTransport::shm;
      intra_via_[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] = via;
    }
  }
  if (env_.shm_disable) {
    for (const auto tr : intra_transport_) {
      if (tr == NcclTransport::shm) {
        notes_.push_back(
            "NCCL_SHM_DISABLE=1 with GPUs that cannot use P2P: NCCL would go through the network "
            "between them; gpufabric still models SHM there");
        break;
      }
    }
  }
  choose_net_transports();
}

int Communicator::nvlink_intermediate(int a, int b) const {
  // NCCL's breadth-first search keeps the path with the most bandwidth, so the intermediate is
  // the rank whose two NVLink hops have the widest narrower one; ties go to the lowest rank.
  const auto& node = t_.node();
  int best = -1;
  double best_bw = 0;
  for (int k = 0; k < ppn_; ++k) {
    if (k == a || k == b) continue;
    const topo::Route in = node.gpu_to_gpu(local_gpu(a), local_gpu(k), true);
    const topo::Route out = node.gpu_to_gpu(local_gpu(k), local_gpu(b), true);
    if (in.transport != topo::Transport::nvlink || out.transport != topo::Transport::nvlink) continue;
    const double bw = std::min(in.bandwidth.value(), out.bandwidth.value());
    if (bw > best_bw * (1 + 1e-12)) {
      best_bw = bw;
      best = k;
    }
  }
  return best;
}

void Communicator::choose_net_transports() {
  // Between nodes: sockets over TCP networks or with NCCL_IB_DISABLE=1; otherwise per GPU,
  // GPUDirect RDMA, PXN through a peer GPU, or staging in host memory (net_side).
  const auto& node = t_.node();
  const bool tcp = t_.network().transport == "tcp" || env_.ib_disable;
  const PathLevel gdr_level = env_.net_gdr_level.value_or(PathLevel::pxb);
  net_.assign(static_cast<std::size_t>(ppn_), NetSide{});
  for (int g = 0; g < ppn_; ++g) {
    auto& side = net_[static_cast<std::size_t>(g)];
    if (node.nics() == 0) continue;
    if (tcp) {
      side.send = NcclTransport::net_socket;
      side.recv_gdr = false;
      side.nics = node.near_nics(local_gpu(g));
      side.proxies.assign(side.nics.size(), -1);
    } else {
      side = net_side(g, gdr_level, !env_.pxn_disable);
    }
  }
}

namespace {

// NCCL's path types in its order (src/graph/topo.h), with PXN between PXB and PHB.
int path_rank(PathLevel l) { return 2 * static_cast<int>(l); }
constexpr int kPxnRank = 2 * static_cast<int>(PathLevel::pxb) + 1;

}  // namespace

Communicator::NetSide Communicator::net_side(int g, PathLevel gdr_level, bool pxn) const {
  const auto& node = t_.node();
  const bool gpudirect = t_.spec().gpudirect;
  const int gpu = local_gpu(g);
  // The communicator's GPU a NIC counts as its own (ncclTopoGetLocalGpu): the nearest to it of
  // this node's ranks, the one whose own NIC it is first. NCCL's topology holds only the
  // communicator's GPUs, so a GPU outside it relays nothing.
  auto nic_peer = [&](int nic) {
    int best = -1;
    int best_key = std::numeric_limits<int>::max();
    for (int q = 0; q < ppn_; ++q) {
      const int lg = local_gpu(q);
      const int key = 2 * path_rank(level_of(node.pcie_path(node.gpu(lg), node.nic(nic)).type)) +
                      (node.nic_of_gpu(lg) == nic ? 0 : 1);
      if (key < best_key) {
        best_key = key;
        best = q;
      }
    }
    return best;
  };
  struct Candidate {
    int nic;
    int proxy;  // local GPU relaying over NVLink, or -1
    double bw;
    int type;
  };
  std::vector<Candidate> candidates;
  for (int n = 0; n < node.nics(); ++n) {
    const topo::Route direct = node.pcie_path(node.gpu(gpu), node.nic(n));
    const PathLevel own = level_of(direct.type);
    Candidate c{n, -1, direct.bandwidth.value(), path_rank(own)};
    // PXN (paths.cc, ncclTopoComputePaths): NIC n through its GPU q when q is on the NIC's PCIe
    // switch (PXB or closer) with GPUDirect RDMA to it, q is reached over NVLink, and either q
    // has more bandwidth to the NIC or our own path to it crosses the CPU (PHB, SYS).
    const int q = pxn ? nic_peer(n) : -1;
    if (q >= 0 && q != g) {
      const int peer_gpu = local_gpu(q);
      const topo::Route peer = node.pcie_path(node.gpu(peer_gpu), node.nic(n));
      const PathLevel peer_level = level_of(peer.type);
      const topo::Route nvlink = node.gpu_to_gpu(gpu, peer_gpu, true);
      const bool over_nvlink = transport(g, q) == NcclTransport::p2p && nvlink.transport == topo::Transport::nvlink;
      if (peer_level <= PathLevel::pxb && gpudirect && peer_level <= gdr_level && over_nvlink &&
          (peer.bandwidth.value() > direct.bandwidth.value() * (1 + 1e-9) || own > PathLevel::pxb)) {
        c = {n, peer_gpu, std::min(nvlink.bandwidth.value(), peer.bandwidth.value()), kPxnRank};
      }
    }
    candidates.push_back(c);
  }
  // The NICs NCCL counts as this GPU's own (ncclTopoGetLocal): the most bandwidth, then the
  // nearest type.
  const auto better = [](const Candidate& x, const Candidate& y) {
    if (x.bw > y.bw * (1 + 1e-9)) return true;
    if (y.bw > x.bw * (1 + 1e-9)) return false;
    return x.type < y.type;
  };
  const Candidate best = *std::min_element(candidates.begin(), candidates.end(), better);
  NetSide side;
  if (best.proxy < 0) {
    // Its own NICs: GPUDirect RDMA where they are no further than NCCL_NET_GDR_LEVEL.
    const int own = node.nic_of_gpu(gpu);
    const bool gdr = gpudirect && level_of(node.pcie_path(node.gpu(gpu), node.nic(own)).type) <= gdr_level;
    side.send = gdr ? NcclTransport::net_gdr : NcclTransport::net_staged;
    side.recv_gdr = gdr;
    side.nics = node.near_nics(gpu);
    side.proxies.assign(side.nics.size(), -1);
    return side;
  }
  // Sends go through the peers (net.cc, sendSetup: the proxy rank's buffers in its GPU memory);
  // receives stay on this GPU, the NIC writing into its memory (GPUDirect RDMA at the peer's
  // distance, ncclTopoCheckGdr; "we don't support PXN on receive yet", recvSetup).
  side.send = NcclTransport::net_pxn;
  side.recv_gdr = true;
  for (const auto& c : candidates) {
    if (!better(best, c) && !better(c, best)) {
      side.nics.push_back(c.nic);
      side.proxies.push_back(c.proxy);
    }
  }
  return side;
}

NcclTransport Communicator::transport(long a, long b) const {
  if (node_of(a) != node_of(b)) return net_[static_cast<std::size_t>(a % ppn_)].send;
  const auto n = static_cast<std::size_t>(ppn_);
  return intra_transport_[static_cast<std::size_t>(a % ppn_) * n + static_cast<std::size_t>(b % ppn_)];
}

topo::Route Communicator::route(long a, long b, int nic_choice) const {
  const long ga = gpu_of(a);
  const long gb = gpu_of(b);
  switch (transport(a, b)) {
    case NcclTransport::shm: {
      // The receiver's buffer in its own socket's memory (NCCL_SHM_LOCALITY's default): the
      // sender's threads store into it across PCIe (and the socket link, at the CPU's rate for
      // SM-driven traffic), the receiver's threads load from it.
      const auto& node = t_.node();
      const int socket = node.socket_of(node.gpu(static_cast<int>(gb % t_.gpus_per_node())));
      topo::Route r = t_.route_gpu_to_memory(ga, socket, true);
      const topo::Route in = t_.route_memory_to_gpu(socket, gb, true);
      r.links.insert(r.links.end(), in.links.begin(), in.links.end());
      r.transport = topo::Transport::pcie_dma;  // GPU threads' loads and stores, not the driver's staging
      measure(r, t_.graph());
      return r;
    }
    case NcclTransport::p2p: {
      const int via = intra_via_[static_cast<std::size_t>(a % ppn_) * static_cast<std::size_t>(ppn_) +
                                 static_cast<std::size_t>(b % ppn_)];
      if (via < 0 || node_of(a) != node_of(b)) return t_.route_gpus(ga, gb, nic_choice, true);
      // Over NVLink into the intermediate GPU's buffer, and on from it (P2P/indirect).
      const long gk = gpu_of(node_of(a) * ppn_ + via);
      topo::Route r = t_.route_gpus(ga, gk, nic_choice, true);
      const topo::Route on = t_.route_gpus(gk, gb, nic_choice, true);
      r.links.insert(r.links.end(), on.links.begin(), on.links.end());
      r.nvlinks = std::min(r.nvlinks, on.nvlinks);
      measure(r, t_.graph());
      return r;
    }
    case NcclTransport::net_gdr:
    case NcclTransport::net_pxn:
    case NcclTransport::net_staged:
    case NcclTransport::net_socket: break;
  }
  const auto& from = net_[static_cast<std::size_t>(a % ppn_)];
  const auto& to = net_[static_cast<std::size_t>(b % ppn_)];
  if (from.nics.empty() || to.nics.empty()) return t_.route_gpus(ga, gb, nic_choice, true);
  // A GPU that sends through PXN to several NICs (each through that NIC's own GPU) starts its
  // channels at the NIC nearest to it and goes on from there, as NCCL takes the GPU's local NIC
  // first, so that the node's GPUs together load every NIC alike. Counting from the first NIC
  // for every GPU put the PXN GPUs of a dgx-h100 with 4 NICs on NICs 0 and 1 only: 6 channels
  // on each against 2 on the others, 2/3 of the four NICs' rate. A GPU's own equally near NICs
  // (two NICs on its PCIe switch) keep the channel's index, which pairs the trees' NICs as before.
  auto pick = [&](const NetSide& side, long rank) {
    std::size_t start = 0;
    if (side.send == NcclTransport::net_pxn) {
      const int own = t_.node().nic_of_gpu(local_gpu(rank));
      const auto it = std::find(side.nics.begin(), side.nics.end(), own);
      if (it != side.nics.end()) start = static_cast<std::size_t>(it - side.nics.begin());
    }
    return (start + static_cast<std::size_t>(nic_choice)) % side.nics.size();
  };
  const auto k = pick(from, a);
  const bool send_gdr = from.send == NcclTransport::net_gdr || from.send == NcclTransport::net_pxn;
  return t_.route_gpus(ga, {from.nics[k], send_gdr, from.proxies[k]}, gb, {to.nics[pick(to, b)], to.recv_gdr, -1},
                       true);
}

double Communicator::connection_rate(long a, long b, bool simplex) const {
  const auto& n = *params_;
  switch (transport(a, b)) {
    // A ring's channel stores its sends into the next GPU's host buffer and loads its receives
    // from its own, with the same threads (prims_simple.h: one reduceCopy per step, loads then
    // stores); a chain of two ranks (broadcast, reduce) only stores on one GPU and only loads
    // on the other, so each channel moves twice as much.
    case NcclTransport::shm: return n.shm_channel_GBps * 1e9 * (simplex ? 2 : 1);
    case NcclTransport::net_socket: {
      // NCCL's socket transport: the slowest socket's rate times the sockets of a connection
      // (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD; by default one, driven by the proxy).
      const int sockets = std::max(1, env_.socket_nthreads) * std::max(1, env_.nsocks_perthread);
      return n.socket_stream_GBps * 1e9 * sockets;
    }
    default: return std::numeric_limits<double>::infinity();
  }
}

double Communicator::link_capacity(topo::LinkId id) const {
  const auto& l = t_.graph().link(id);
  if (l.kind == topo::LinkKind::nvlink && nvlink_efficiency_) return l.line_rate.value() * *nvlink_efficiency_;
  if (l.kind == topo::LinkKind::network || l.kind == topo::LinkKind::bundle) return l.capacity.value() * net_scale_;
  return l.capacity.value();
}

const std::vector<double>& Communicator::capacity() const {
  // Built on first use: the closed form reads a few links through link_capacity(), and a large
  // cluster has millions of links that only the flow engine needs all of.
  std::call_once(capacity_once_, [this] {
    capacity_.reserve(t_.graph().link_count());
    for (topo::LinkId l = 0; l < static_cast<topo::LinkId>(t_.graph().link_count()); ++l)
      capacity_.push_back(link_capacity(l));
  });
  return capacity_;
}

double Communicator::data_seconds_per_byte(int op, int algo, long root, bool flow, bool fabric,
                                           const std::function<double()>& compute_per_byte) const {
  const auto key = std::make_tuple(op, algo, root, flow, fabric);
  {
    const std::lock_guard<std::mutex> lock(cache_mutex_);
    if (const auto it = data_cache_.find(key); it != data_cache_.end()) return it->second;
  }
  const double v = compute_per_byte();  // outside the lock: the flow engine may take a while
  const std::lock_guard<std::mutex> lock(cache_mutex_);
  return data_cache_.emplace(key, v).first->second;
}

std::vector<std::string> Communicator::transport_summary() const {
  std::vector<std::string> out;
  std::map<std::string, std::string> seen;  // transport -> first example pair
  const std::string& tech = t_.network().transport;
  // The net plugin's name: aws-ofi-nccl (libfabric) for EFA and for Slingshot's CXI provider.
  const std::string& family = t_.network().family;
  const std::string net_name = family == "efa" || family == "slingshot" ? "Libfabric"
                               : tech == "tcpx"                         ? "GPUDirectTCPX"
                                                                        : "IB";
  for (int a = 0; a < ppn_; ++a) {
    for (int b = 0; b < ppn_; ++b) {
      if (a == b) continue;
      const int via = intra_via_[static_cast<std::size_t>(a * ppn_ + b)];
      const std::string name =
          via >= 0 ? fmt::format("P2P/indirect/{}[{}]", via, local_gpu(via)) : nccl_name(transport(a, b), net_name);
      const topo::Route direct = t_.node().gpu_to_gpu(local_gpu(a), local_gpu(b), true);
      const std::string cls = direct.label();
      const std::string key = (via >= 0 ? std::string("P2P/indirect") : name) + " " + cls;
      if (seen.count(key) != 0) continue;
      seen[key] = name;
      out.push_back(fmt::format("GPU{} -> GPU{} ({}): {}", local_gpu(a), local_gpu(b), cls, name));
    }
  }
  if (nodes_ > 1) summarize_net(net_name, out);
  return out;
}

void Communicator::summarize_net(const std::string& net_name, std::vector<std::string>& out) const {
  // Ranks sending through their own NICs: one line per transport (one line in all when every
  // rank does the same); ranks sending through PXN: one line per NIC they use, in NCCL's
  // spelling with the proxy's rank (on the first node, a rank is its local index).
  std::map<NcclTransport, std::vector<int>> own;
  bool any_pxn = false;
  for (int g = 0; g < ppn_; ++g) {
    const auto send = net_[static_cast<std::size_t>(g)].send;
    if (send == NcclTransport::net_pxn) {
      any_pxn = true;
    } else {
      own[send].push_back(local_gpu(g));
    }
  }
  if (!any_pxn && own.size() == 1) {
    out.push_back(fmt::format("between nodes: {}", nccl_name(own.begin()->first, net_name)));
    return;
  }
  for (const auto& [send, gpus] : own) {
    std::string who;
    for (const int gpu : gpus) who += (who.empty() ? "GPU" : ", GPU") + std::to_string(gpu);
    out.push_back(fmt::format("between nodes from {}: {}", who, nccl_name(send, net_name)));
  }
  for (int g = 0; g < ppn_; ++g) {
    const auto& side = net_[static_cast<std::size_t>(g)];
    if (side.send != NcclTransport::net_pxn) continue;
    for (std::size_t k = 0; k < side.nics.size(); ++k) {
      const int proxy = side.proxies[k];
      int proxy_rank = -1;
      for (int q = 0; q < ppn_ && proxy >= 0; ++q) {
        if (local_gpu(q) == proxy) proxy_rank = q;
      }
      const std::string name = nccl_net_connection(net_name, side.nics[k], proxy_rank, true);
      out.push_back(proxy < 0 ? fmt::format("between nodes from GPU{}: {}", local_gpu(g), name)
                              : fmt::format("between nodes from GPU{}: {} (PXN: over NVLink to GPU{}, whose NIC {} "
                                            "sends it; receives on GPU{} itself)",
                                            local_gpu(g), name, proxy, side.nics[k], local_gpu(g)));
    }
  }
}

void Communicator::search_intra_ring() {
  std::vector<int> natural(static_cast<std::size_t>(ppn_));
  std::iota(natural.begin(), natural.end(), 0);
  intra_rings_ = {natural};
  const auto& node = t_.node();
  const bool mesh = t_.spec().node.gpu_fabric == topo::GpuFabric::nvlink_mesh && t_.spec().p2p;
  // Brute force over the orders with rank 0 first: at most 9! = 362,880 for 10 GPUs.
  if (!mesh || ppn_ < 3 || ppn_ > 10) return;
  const auto n = static_cast<std::size_t>(ppn_);
  std::vector<std::vector<double>> residual(n, std::vector<double>(n, 0.0));
  for (int a = 0; a < ppn_; ++a) {
    for (int b = 0; b < ppn_; ++b) {
      if (a == b) continue;
      const auto r = node.gpu_to_gpu(local_gpu(a), local_gpu(b), true);
      if (r.transport != topo::Transport::nvlink) continue;  // NCCL's rings stay on NVLink
      double cap = std::numeric_limits<double>::infinity();
      for (const auto l : r.links) cap = std::min(cap, link_capacity(l));
      residual[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = cap;
    }
  }
  std::vector<std::vector<int>> rings;
  const int wanted = std::max(1, channels_hint_ / 2);
  for (int k = 0; k < wanted; ++k) {
    std::vector<int> order = natural;
    std::vector<int> best;
    double best_min = 0;
    double best_sum = 0;
    do {
      double mn = std::numeric_limits<double>::infinity();
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double b = residual[static_cast<std::size_t>(order[i])][static_cast<std::size_t>(order[(i + 1) % n])];
        mn = std::min(mn, b);
        sum += b;
      }
      if (mn > best_min * (1 + 1e-12) || (mn > 0 && mn >= best_min * (1 - 1e-12) && sum > best_sum * (1 + 1e-12))) {
        best_min = mn;
        best_sum = sum;
        best = order;
      }
    } while (std::next_permutation(order.begin() + 1, order.end()));
    if (best.empty()) break;  // no NVLink-only cycle left
    rings.push_back(best);
    // A cycle runs in both directions (two channels), using its bottleneck share of every hop.
    for (std::size_t i = 0; i < n; ++i) {
      const auto a = static_cast<std::size_t>(best[i]);
      const auto b = static_cast<std::size_t>(best[(i + 1) % n]);
      residual[a][b] -= best_min;
      residual[b][a] -= best_min;
    }
  }
  if (rings.empty()) return;
  intra_rings_ = rings;
  bidirectional_rings_ = true;
  nvlink_intra_ = true;  // NCCL's rings here are all NVLink hops
}

std::string Communicator::describe() const {
  return fmt::format("{} ranks on {} node{} x {} {} ({}), network {}", ranks_, nodes_, nodes_ == 1 ? "" : "s", ppn_,
                     t_.gpu_spec().name, nvlink_intra_ ? "NVLink" : "PCIe", t_.network().name);
}

}  // namespace gf::comm
