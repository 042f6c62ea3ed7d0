#include "comm/pattern.hpp"

#include <algorithm>
#include <cmath>

#include "comm/nccl_params.hpp"

namespace gf::comm {

namespace {

class Emitter {
public:
  Emitter(const Communicator& c, double inflate, PatternScope scope, const FlowSink& sink, bool simplex)
      : c_(c), inflate_(inflate), scope_(scope), sink_(sink), simplex_(simplex) {}

  // One flow from rank a to rank b over the topology's route.
  void edge(long a, long b, double bytes, int nic_choice = 0) {
    if (a == b || bytes <= 0) return;
    if (scope_.only_node >= 0 && c_.node_of(a) != scope_.only_node && c_.node_of(b) != scope_.only_node) return;
    const topo::Route r = c_.route(a, b, nic_choice);
    const double wire = bytes * inflate_;
    if (scope_.connection_time != nullptr) {
      const double rate = c_.connection_rate(a, b, simplex_);
      if (std::isfinite(rate)) *scope_.connection_time = std::max(*scope_.connection_time, wire / rate);
    }
    sink_(r.links, wire);
  }

  // The node the closed form looks at, or -1 for every node.
  [[nodiscard]] long only_node() const { return scope_.only_node; }

  void raw(long node, std::span<const topo::LinkId> path, double bytes) {
    if (scope_.only_node >= 0 && node != scope_.only_node) return;
    sink_(path, bytes * inflate_);
  }

private:
  const Communicator& c_;
  double inflate_;
  PatternScope scope_;
  const FlowSink& sink_;
  bool simplex_;
};

// Ranks in ring order for channel c: node by node, each node's ranks rotated by the channel so
// that different channels leave a node through different GPUs (and so different NICs).
std::vector<long> ring_order(const Communicator& c, int channel) {
  const int p = c.ranks_per_node();
  const auto& ring = c.intra_ring(channel);
  const bool reverse = c.bidirectional_rings() && channel % 2 == 1;
  std::vector<long> order;
  order.reserve(static_cast<std::size_t>(c.ranks()));
  for (long k = 0; k < c.nodes(); ++k) {
    for (int j = 0; j < p; ++j) {
      const int step = (channel + 1 + j) % p;
      const int pos = reverse ? (p - step) % p : step;
      order.push_back(k * p + ring[static_cast<std::size_t>(pos)]);
    }
  }
  return order;
}

double ring_volume(Op op, long n, double size) {
  const double r = static_cast<double>(n);
  switch (op) {
    case Op::all_reduce: return 2.0 * (r - 1) / r * size;
    case Op::all_gather:
    case Op::reduce_scatter: return (r - 1) / r * size;
    default: return size;
  }
}

void emit_ring(const Communicator& c, Op op, double size, long root, Emitter& e) {
  const int ch = channels(c, Algo::ring);
  const long n = c.ranks();
  const bool chain = op == Op::broadcast || op == Op::reduce;
  const double per_edge = ring_volume(op, n, size) / ch;
  const int p = c.ranks_per_node();
  for (int k = 0; k < ch; ++k) {
    const long only = e.only_node();
    if (!chain && only >= 0 && n > p + 1) {
      // Only the edges with an end on that node: its own block of the node-major ring order and
      // the edges into it and out of it (the rest is the same by symmetry).
      const auto& ring = c.intra_ring(k);
      const bool reverse = c.bidirectional_rings() && k % 2 == 1;
      auto at = [&](long pos) {
        pos = ((pos % n) + n) % n;
        const long node = pos / p;
        const int j = static_cast<int>(pos % p);
        const int step = (k + 1 + j) % p;
        const int where = reverse ? (p - step) % p : step;
        return node * p + ring[static_cast<std::size_t>(where)];
      };
      for (long i = only * p - 1; i < (only + 1) * p; ++i) e.edge(at(i), at(i + 1), per_edge, k / p);
      continue;
    }
    auto order = ring_order(c, k);
    if (chain) {
      // The chain starts at the root (broadcast) or ends there (reduce: same edges, reversed
      // direction, same time on symmetric links).
      std::rotate(order.begin(), std::find(order.begin(), order.end(), root), order.end());
    }
    for (long i = 0; i < n; ++i) {
      if (chain && i == n - 1) break;  // a pipelined chain from the root: no edge back into it
      e.edge(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>((i + 1) % n)], per_edge,
             k / c.ranks_per_node());
    }
  }
}

long tree_parent(long node, long nodes, int tree) {
  if (tree == 0) return node == 0 ? -1 : (node - 1) / 2;
  const long m = nodes - 1 - node;  // the second tree mirrors the first
  return m == 0 ? -1 : nodes - 1 - (m - 1) / 2;
}

// Double binary tree between nodes (both directions: reduce up, broadcast down), with a chain
// through each node's ranks unless `chains` is false (NVLS does the intra-node part).
void emit_tree(const Communicator& c, double size, bool chains, Emitter& e) {
  const int nch = channels(c, Algo::tree);
  const int p = c.ranks_per_node();
  const double per = size / nch;
  const long only = e.only_node();
  for (int ch = 0; ch < nch; ++ch) {
    const int head = (ch * p / nch) % p;
    for (long k = 0; k < c.nodes(); ++k) {
      // For one node's edges: the node itself and its children in this channel's tree (their
      // uplinks end on it); its own uplink is emitted with it.
      if (only >= 0 && k != only && tree_parent(k, c.nodes(), ch % 2) != only) continue;
      const long base = k * p;
      if (chains) {
        for (int j = 0; j + 1 < p; ++j) {
          const long a = base + (head + j) % p;
          const long b = base + (head + j + 1) % p;
          e.edge(b, a, per);  // reduce towards the head
          e.edge(a, b, per);  // broadcast away from it
        }
      }
      const long parent = tree_parent(k, c.nodes(), ch % 2);
      if (parent >= 0) {
        const int nic = ch % std::max(1, nch / p);  // channels sharing a head use its NICs in turn
        e.edge(base + head, parent * p + head, per, nic);
        e.edge(parent * p + head, base + head, per, nic);
      }
    }
  }
}

// NVLS: every GPU sends its buffer into the NVSwitch and receives the reduced result back.
void emit_nvls(const Communicator& c, double size, Emitter& e) {
  const auto& params = c.params();
  const auto& gpu = c.topology().gpu_spec();
  const int gen = gpu.nvlink ? gpu.nvlink->generation : 0;
  const auto eff = params.nvlink_efficiency.find(gen);
  const double nvlink_eff = eff == params.nvlink_efficiency.end() ? 1.0 : eff->second;
  const auto nvls = params.nvls_efficiency.find(gen);
  const double nvls_eff = nvls == params.nvls_efficiency.end() ? nvlink_eff : nvls->second;
  // The capacity model runs NVLink at NCCL's SM-copy efficiency; NVLS reaches nvls_efficiency.
  const double scale = nvlink_eff / nvls_eff;
  const int p = c.ranks_per_node();
  // For one node's edges, only its own ranks (the routes are the costly part).
  const long first = e.only_node() >= 0 ? e.only_node() * p : 0;
  const long last = e.only_node() >= 0 ? first + p : c.ranks();
  for (long r = first; r < last; ++r) {
    const long peer = (r / p) * p + (r % p + 1) % p;
    const topo::Route route = c.route(r, peer);  // GPU -> NVSwitch -> GPU
    if (route.links.size() != 2) continue;
    e.raw(c.node_of(r), std::span(route.links).subspan(0, 1), size * scale);
    const topo::Route back = c.route(peer, r);
    e.raw(c.node_of(r), std::span(back.links).subspan(1, 1), size * scale);
  }
}

// CollNet (SHARP): the node reduces internally, each NIC sends its share up to the switch and
// receives the reduced share back. CollNetChain reduces along a chain of the node's ranks
// towards a head next to a NIC and broadcasts the result back down it (NCCL's chain: no NVLS
// even where the NVSwitch has it); CollNetDirect reduces through NVLS where it can, otherwise
// as a ring reduce-scatter and all-gather inside the node.
void emit_collnet(const Communicator& c, Algo algo, double size, Emitter& e) {
  const auto& t = c.topology();
  const int p = c.ranks_per_node();
  if (algo == Algo::collnet_chain) {
    const int nch = channels(c, Algo::collnet_chain);
    const double per = size / nch;
    for (int ch = 0; ch < nch; ++ch) {
      const int head = (ch * p / nch) % p;
      for (long k = 0; k < c.nodes(); ++k) {
        const long base = k * p;
        for (int j = 1; j < p; ++j) {
          const long a = base + (head + j) % p;
          const long towards = base + (head + j - 1) % p;  // one step closer to the head
          e.edge(a, towards, per);                         // reduce towards the head
          e.edge(towards, a, per);                         // broadcast away from it
        }
      }
    }
  } else if (c.nvls_capable()) {
    emit_nvls(c, size, e);
  } else {
    const double vol = 2.0 * (p - 1) / p * size;
    for (long k = 0; k < c.nodes(); ++k) {
      for (int j = 0; j < p; ++j) e.edge(k * p + j, k * p + (j + 1) % p, vol);
    }
  }
  // Each NIC's head: the first of the node's ranks whose nearest NIC it is (by local rank).
  std::vector<int> nic_gpu(static_cast<std::size_t>(t.node().nics()), -1);
  for (int g = 0; g < p; ++g) {
    const int nic = t.node().nic_of_gpu(c.local_gpu(g));
    if (nic >= 0 && nic_gpu[static_cast<std::size_t>(nic)] < 0) nic_gpu[static_cast<std::size_t>(nic)] = g;
  }
  int used = 0;
  for (int g : nic_gpu) used += g >= 0 ? 1 : 0;
  const double share = size / std::max(1, used);
  for (long k = 0; k < c.nodes(); ++k) {
    for (int nic = 0; nic < t.node().nics(); ++nic) {
      const int g = nic_gpu[static_cast<std::size_t>(nic)];
      if (g < 0) continue;
      const long gpu = c.gpu_of(k * p + g);
      const long node = c.cluster_node(k);
      std::vector<topo::LinkId> up = t.route_gpu_to_nic(gpu, nic).links;
      up.push_back(t.fabric()->nic_uplink(node, nic));
      e.raw(k, up, share);
      std::vector<topo::LinkId> down{t.fabric()->nic_uplink(node, nic) + 1};
      const auto tail = t.route_nic_to_gpu(nic, gpu).links;
      down.insert(down.end(), tail.begin(), tail.end());
      e.raw(k, down, share);
    }
  }
}

// All-to-all: every rank sends size/n to every other. Traffic to another node is sent by each
// rank as one flow to the GPU of the same local index there (the rail-aligned path NCCL's PXN
// takes), carrying the share of every rank of that node.
void emit_alltoall(const Communicator& c, double size, Emitter& e) {
  const long n = c.ranks();
  const int p = c.ranks_per_node();
  const double chunk = size / static_cast<double>(n);
  for (long a = 0; a < n; ++a) {
    const long na = c.node_of(a);
    for (int j = 0; j < p; ++j) e.edge(a, na * p + j, chunk);
    for (long m = 0; m < c.nodes(); ++m) {
      if (m != na) e.edge(a, m * p + a % p, chunk * p);
    }
  }
}

// Hierarchical all-reduce: phase 0 reduce-scatters inside each node (ring over the node's
// ranks), phase 1 all-reduces each 1/p shard across nodes (a ring per local index, i.e. per
// rail), phase 2 all-gathers inside each node.
void emit_hierarchical(const Communicator& c, double size, int phase, Emitter& e) {
  const int p = c.ranks_per_node();
  const long nodes = c.nodes();
  if (phase == 1) {
    const double per_edge = 2.0 * static_cast<double>(nodes - 1) / static_cast<double>(nodes) * size / p;
    for (int j = 0; j < p; ++j) {
      for (long k = 0; k < nodes; ++k) e.edge(k * p + j, ((k + 1) % nodes) * p + j, per_edge);
    }
    return;
  }
  const double per_edge = static_cast<double>(p - 1) / p * size;
  for (long k = 0; k < nodes; ++k) {
    for (int j = 0; j < p; ++j) e.edge(k * p + j, k * p + (j + 1) % p, per_edge);
  }
}

}  // namespace

int phases(Op op, Algo algo) { return op == Op::all_reduce && algo == Algo::hierarchical ? 3 : 1; }

long representative_node(const Communicator& c, Algo algo) {
  const bool tree = algo == Algo::tree || algo == Algo::nvls_tree;
  // Node 1 is interior in the first tree (a parent and two children) and a leaf in the second:
  // the most tree edges any node has.
  return tree && c.nodes() >= 4 ? 1 : 0;
}

namespace {

// The channel count NCCL's search and init would give without environment overrides.
int default_channels(const Communicator& c, Algo algo) {
  // NVLS and NVLS-tree run NCCL_NVLS_NCHANNELS channels, on one node or several.
  if (algo == Algo::nvls || algo == Algo::nvls_tree) return c.params().nvls_channels;
  // Across nodes NCCL runs two channels per NIC (or per GPU, whichever is more), at most 32.
  const int width = std::max(1, std::max(c.nics_per_node(), c.ranks_per_node()));
  if (c.nodes() > 1) return std::min(32, 2 * width);
  if (algo == Algo::tree) return 2;
  if (c.nvlink_intra()) {
    const auto& gpu = c.topology().gpu_spec();
    // An NVSwitch node: the channel count NCCL prints at init for this NVLink generation.
    if (c.topology().node().has_nvswitch() && gpu.nvlink) {
      const auto& table = c.params().nvswitch_coll_channels;
      if (const auto it = table.find(gpu.nvlink->generation); it != table.end()) return it->second;
    }
    return std::clamp(gpu.nvlink ? gpu.nvlink->links : 2, 2, 32);
  }
  return 2;
}

}  // namespace

int channels(const Communicator& c, Algo algo) {
  int n = default_channels(c, algo);
  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS bound the ring and tree channels (NCCL duplicates
  // or drops channels of its search to meet them); NVLS keeps NCCL_NVLS_NCHANNELS.
  if (algo != Algo::nvls && algo != Algo::nvls_tree) {
    if (c.env().min_channels > 0) n = std::max(n, c.env().min_channels);
    if (c.env().max_channels > 0) n = std::min(n, c.env().max_channels);
  }
  return n;
}

void emit_pattern(const Communicator& c, Op op, Algo algo, double size, double inflate, PatternScope scope,
                  const FlowSink& sink) {
  // A chain of two ranks (broadcast, reduce) has each GPU only sending or only receiving.
  const bool simplex = (op == Op::broadcast || op == Op::reduce) && c.ranks() == 2;
  Emitter e(c, inflate, scope, sink, simplex);
  switch (op) {
    case Op::alltoall: emit_alltoall(c, size, e); return;
    case Op::sendrecv:
      for (long a = 0; a < c.ranks(); ++a) e.edge(a, (a + 1) % c.ranks(), size);
      return;
    default: break;
  }
  switch (algo) {
    case Algo::tree: emit_tree(c, size, true, e); return;
    case Algo::nvls: emit_nvls(c, size, e); return;
    case Algo::nvls_tree:
      emit_nvls(c, size, e);
      emit_tree(c, size, false, e);
      return;
    case Algo::collnet_direct:
    case Algo::collnet_chain: emit_collnet(c, algo, size, e); return;
    case Algo::hierarchical:
      if (op == Op::all_reduce) {
        emit_hierarchical(c, size, scope.phase, e);
        return;
      }
      emit_ring(c, op, size, scope.root, e);
      return;
    default: emit_ring(c, op, size, scope.root, e); return;
  }
}

}  // namespace gf::comm
