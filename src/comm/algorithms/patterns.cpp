#include "comm/algorithms/patterns.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <vector>

#include "comm/nccl_params.hpp"

namespace gf::comm {

namespace {

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

// The parent of `node` in NCCL's binary tree over `nodes` (src/graph/trees.cc, ncclGetBtree,
// NCCL 2.4 to 2.30): rooted at 0, with the interior nodes on even indices, so that 0's one child
// is the largest power of two below `nodes` and node 2 of 4 has a parent and two children. (A
// heap-ordered tree would give 4 nodes no node with three tree edges.)
long btree_parent(long node, long nodes) {
  if (node == 0) return -1;
  long bit = 1;
  while (bit < nodes && (bit & node) == 0) bit <<= 1;
  const long up = (node ^ bit) | (bit << 1);
  return up < nodes ? up : node ^ bit;
}

// The children of `node` in NCCL's binary tree (ncclGetBtree's down0 and down1; -1 for none).
std::array<long, 2> btree_children(long node, long nodes) {
  if (node == 0) {
    long bit = 1;
    while (bit < nodes) bit <<= 1;
    return {-1, nodes > 1 ? bit >> 1 : -1};
  }
  long bit = 1;
  while ((bit & node) == 0) bit <<= 1;
  long low = bit >> 1;
  if (low == 0) return {-1, -1};
  const long first = node - low;
  long second = node + low;
  while (second >= nodes && low > 0) {  // the largest child index below `nodes`, halving the step
    low >>= 1;
    second = low == 0 ? -1 : node + low;
  }
  return {first, second};
}

// The children of `node` in tree 0 or 1 of the double binary tree (see tree_parent below).
std::array<long, 2> tree_children(long node, long nodes, int tree) {
  if (tree == 0) return btree_children(node, nodes);
  const bool mirror = nodes % 2 == 0;
  const long image = mirror ? nodes - 1 - node : (node - 1 + nodes) % nodes;
  std::array<long, 2> out = btree_children(image, nodes);
  for (long& k : out) {
    if (k >= 0) k = mirror ? nodes - 1 - k : (k + 1) % nodes;
  }
  return out;
}

// The parent of `node` in tree 0 or 1 of NCCL's double binary tree (ncclGetDtree): the second
// tree mirrors the first where the node count is even and shifts it by one where it is odd, so
// that a node interior in one tree is a leaf in the other.
long tree_parent(long node, long nodes, int tree) {
  if (tree == 0) return btree_parent(node, nodes);
  if (nodes % 2 == 0) {
    const long up = btree_parent(nodes - 1 - node, nodes);
    return up < 0 ? -1 : nodes - 1 - up;
  }
  const long up = btree_parent((node - 1 + nodes) % nodes, nodes);
  return up < 0 ? -1 : (up + 1) % nodes;
}

}  // namespace

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

void emit_tree(const Communicator& c, double size, bool chains, Emitter& e) {
  const int nch = channels(c, Algo::tree);
  const int p = c.ranks_per_node();
  const double per = size / nch;
  const long only = e.only_node();
  for (int ch = 0; ch < nch; ++ch) {
    const int head = (ch * p / nch) % p;
    // For one node's edges: the node itself and its children in this channel's tree (their
    // uplinks end on it); its own uplink is emitted with it.
    const std::array<long, 2> children = only >= 0 ? tree_children(only, c.nodes(), ch % 2) : std::array<long, 2>{};
    const std::array<long, 3> one_node{only, children[0], children[1]};
    const long count = only >= 0 ? 3 : c.nodes();
    for (long i = 0; i < count; ++i) {
      const long k = only >= 0 ? one_node[static_cast<std::size_t>(i)] : i;
      if (k < 0) continue;
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

long busiest_tree_leaf_node(const Communicator& c, const std::function<long(long)>& leaf_of) {
  const long n = c.nodes();
  std::vector<long> leaf(static_cast<std::size_t>(n));
  for (long k = 0; k < n; ++k) leaf[static_cast<std::size_t>(k)] = leaf_of(k);
  std::unordered_map<long, long> crossings;
  long best = 0;
  long most = -1;
  for (long k = 0; k < n; ++k) {
    for (int tree = 0; tree < 2; ++tree) {
      const long parent = tree_parent(k, n, tree);
      const long a = leaf[static_cast<std::size_t>(k)];
      if (parent < 0 || leaf[static_cast<std::size_t>(parent)] == a) continue;
      for (const long l : {a, leaf[static_cast<std::size_t>(parent)]}) {
        const long count = ++crossings[l];
        if (count > most) {
          most = count;
          best = l == a ? k : parent;
        }
      }
    }
  }
  return best;
}

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

std::vector<int> collnet_heads(const Communicator& c) {
  const auto& t = c.topology();
  std::vector<int> nic_gpu(static_cast<std::size_t>(t.node().nics()), -1);
  for (int g = 0; g < c.ranks_per_node(); ++g) {
    const int nic = t.node().nic_of_gpu(c.local_gpu(g));
    if (nic >= 0 && nic_gpu[static_cast<std::size_t>(nic)] < 0) nic_gpu[static_cast<std::size_t>(nic)] = g;
  }
  return nic_gpu;
}

namespace {

// What a byte costs a switch port that SHARP reduces on: it aggregates below the point-to-point
// rate the link is priced at, so its share costs the port the link's efficiency over SHARP's.
double sharp_port_cost(const Communicator& c) {
  const auto& t = c.topology();
  const double sharp = t.network_switch().sharp_efficiency;
  return sharp > 0 ? std::max(1.0, t.network().efficiency / sharp) : 1.0;
}

// One NIC's four legs to and from its SHARP switch: head GPU to NIC, port up, port down, NIC to
// head GPU; the port legs in link time (see sharp_port_cost).
void emit_sharp_legs(const Communicator& c, long k, int nic, int g, double up, double down, double port_cost,
                     Emitter& e) {
  const auto& t = c.topology();
  const int p = c.ranks_per_node();
  const long gpu = c.gpu_of(k * p + g);
  const topo::LinkId uplink = t.fabric()->nic_uplink(c.cluster_node(k), nic);
  const topo::LinkId downlink = uplink + 1;
  e.raw(k, t.route_gpu_to_nic(gpu, nic).links, up);
  e.raw(k, std::span(&uplink, 1), up * port_cost);
  e.raw(k, std::span(&downlink, 1), down * port_cost);
  e.raw(k, t.route_nic_to_gpu(nic, gpu).links, down);
}

}  // namespace

void emit_collnet_nics(const Communicator& c, double size, Emitter& e) {
  const std::vector<int> nic_gpu = collnet_heads(c);
  int used = 0;
  for (int g : nic_gpu) used += g >= 0 ? 1 : 0;
  const double share = size / std::max(1, used);
  const double port_cost = sharp_port_cost(c);
  for (long k = 0; k < c.nodes(); ++k) {
    for (std::size_t nic = 0; nic < nic_gpu.size(); ++nic) {
      if (nic_gpu[nic] >= 0) emit_sharp_legs(c, k, static_cast<int>(nic), nic_gpu[nic], share, share, port_cost, e);
    }
  }
}

void emit_collnet_rails(const Communicator& c, Op op, double size, Emitter& e) {
  const std::vector<int> nic_gpu = collnet_heads(c);
  const int p = c.ranks_per_node();
  const double block = size / static_cast<double>(c.ranks());  // one rank's block
  const double rail = block * static_cast<double>(c.nodes());  // a rail's blocks, every node's
  const bool gather = op == Op::all_gather;
  // all_gather reduces nothing: the switch replicates the blocks at the port's own rate.
  const double port_cost = gather ? 1.0 : sharp_port_cost(c);
  for (long k = 0; k < c.nodes(); ++k) {
    for (std::size_t nic = 0; nic < nic_gpu.size(); ++nic) {
      const int g = nic_gpu[nic];
      if (g < 0) continue;
      emit_sharp_legs(c, k, static_cast<int>(nic), g, gather ? block : rail, gather ? rail : block, port_cost, e);
      for (int j = 0; j < p; ++j) {
        if (j == g) continue;
        if (gather) {
          e.edge(k * p + g, k * p + j, rail);  // the rail's blocks into the node's other ranks
        } else {
          e.edge(k * p + j, k * p + g, rail);  // their partial blocks for this rail
        }
      }
    }
  }
}

}  // namespace gf::comm
