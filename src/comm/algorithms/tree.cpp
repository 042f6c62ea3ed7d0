// NCCL's tree: a chain through each node's ranks and a double binary tree between the nodes,
// reducing up and broadcasting down (all_reduce only). Its chunks run in a pipeline that fills
// up and down the tree's depth.
#include <algorithm>
#include <cmath>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/chunk_rules.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/nccl_tuner.hpp"
#include "comm/pattern.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

// Tree/LL128 across nodes. Inside a node LL128 hands on every 128-byte line with its own flag,
// but NCCL's network proxy sends a step only when all of its lines are written (src/transport/
// net.cc, sendProxyProgress checks every line's flag of an LL128 step before posting it), so
// each network hop of the tree stores and forwards whole chunks: the GPU fills the chunk, then
// the NIC moves it. Up and down the tree that is 2 x 2 x log2(nodes) chunk stages in series.
// The chunk is NCCL's (calcCollChunking, NCCL 2.7 to 2.30): an LL128 buffer step's data,
// halved while each channel would get fewer than nsteps x 64 / ppn chunks (down to 128 KiB)
// and nsteps x 16 / ppn (down to 32 KiB), with nsteps = 1 + log2(nodes) + ppn / 10.
PipelineShape ll128_across_nodes(const Communicator& c, double size) {
  PipelineShape s;
  double chunk = chunk_rules::ll128_step_data_bytes();
  const double ppn = static_cast<double>(c.ranks_per_node());
  const double nsteps = 1 + std::floor(std::log2(static_cast<double>(c.nodes()))) + 0.1 * ppn;
  s.pipelines = channels(c, Algo::tree);
  const double p = static_cast<double>(s.pipelines);
  // NCCL divides integers here: whole chunks per channel.
  while (std::floor(size / (p * chunk)) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (std::floor(size / (p * chunk)) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
  s.chunk_bytes = chunk;
  s.depth = 2 * chunk_rules::ceil_log2(c.nodes());
  return s;
}

class Tree final : public CollectiveAlgorithm {
public:
  constexpr Tree()
      : CollectiveAlgorithm({.id = Algo::tree, .name = "Tree", .fill_bounded_by_depth = true, .nodes_alike = false}) {}

  [[nodiscard]] bool available(const Communicator& /*c*/, Op op, bool /*nvls_type*/) const override {
    return op == Op::all_reduce;
  }

  [[nodiscard]] double protocol_factor(const Communicator& c, Op /*op*/, Proto p) const override {
    return c.params().factor[c.nodes() == 1 ? 3 : 2][static_cast<int>(p)];
  }
  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto p) const override {
    // NCCL's Tree/Simple hop figure (28 us on every link type) is, in its own words, "some chunk
    // latency, waiting for proper chunk modeling" (tuning.cc). The time here models the chunk
    // pipeline explicitly (pipeline_fill), so a Tree/Simple step costs what a Simple step on the
    // same link costs in a ring. (NCCL's tuner, with its own tables, is nccl_latency_us.)
    const LatencyTerms t = latency_terms(c, p, Algo::tree, p == Proto::simple ? Algo::ring : Algo::tree);
    const long ppn = c.ranks_per_node();
    double us = t.base;
    us += 2.0 * (static_cast<double>(ppn - 1) * t.intra + log2_ceil(c.nodes()) * t.inter);
    return us;
  }
  void adjust_wire(const Communicator& c, Op op, Proto p, double size, WireTerms& w) const override {
    // NCCL's trees reach less than their steady rate at medium sizes ("Trees are not perfectly
    // sticking to the model for medium sizes", tuning.cc): NCCL's own measured factors by size,
    // which its tuner applies to the tree's bandwidth, apply to the time here too. The pipeline
    // fill is the start-up of the chunk stream; this is the shortfall of its steady part.
    // NCCL measured its factors on full nodes, whose trees run a chain through every GPU of a
    // node before the network. With one rank per node there is no chain, and the published
    // runs of that shape show no such shortfall (NVIDIA/nccl-tests #232: 2 nodes x 1 H100,
    // forced Tree, 39.9 GB/s at 16 MiB and 41.3 at 32 MiB, where the factor is 0.7), so the
    // time here leaves it out. NCCL's own tuner keeps it (nccl_bw_correction), as NCCL does.
    if (op != Op::all_reduce) return;
    // NCCL's measured ceiling of one tree channel by architecture and node count (tuning.cc's
    // perChMaxTreeBws and perChMaxTreeLL128Bws, bus bandwidth per channel of its search graph;
    // LL's cap is the protocol floor already in `w`): the tree kernel's own limit, which the
    // links' capacities do not show (2-46 B200 nodes measure 191-194 GB/s with Tree at 16 GiB,
    // 24 GB/s x 8 channels reproduces them within 3%).
    const auto& t = c.params().tuner;
    const int g = static_cast<int>(c.gpu_generation());
    const int ni = nccl_node_index(c);
    // NCCL caps LL128 below Simple's own cap: its tuner first bounds every tree protocol by the
    // Simple per-channel figure ("busBw = min(busBw * .92, nCh * perChMaxTreeBw)"), then LL128
    // at 120/128 of that (7/9 in one node) and its own per-channel figure. Taking the LL128 cap
    // alone let LL128 outrun Simple at GiB sizes (20 against 17.8 GB/s per channel on Ampere
    // from 3 nodes up), which neither NCCL's model nor its kernels do.
    const double ll128_share = c.nodes() == 1 ? t.tree_ll128_single_node : t.tree_ll128_multi_node;
    const double per_channel = p == Proto::simple ? t.tree_cap_GBps[g][ni]
                               : p == Proto::ll128
                                   ? std::min(t.tree_cap_GBps[g][ni] * ll128_share, t.tree_ll128_cap_GBps[g][ni])
                                   : 0.0;
    if (per_channel > 0) {
      const double algbw = nccl_algbw_ratio(op, c.ranks()) * nccl_graph_channels(channels(c)) * per_channel * 1e9;
      w.floor = std::max(w.floor, size / algbw);
    }
    if (c.ranks_per_node() == 1) return;
    const double correction = nccl_tree_correction(c, p, size);
    w.inflate /= correction;
    w.floor /= correction;
  }

  [[nodiscard]] long representative_node(const Communicator& c) const override {
    // Node 2 is interior in NCCL's first tree (a parent and two children from 4 nodes up) and a
    // leaf in the second: the most tree edges any node has (with 3 nodes, a chain's middle).
    return representative_tree_node(c.nodes());
  }
  void emit(const Communicator& c, Op /*op*/, double size, const PatternScope& /*scope*/, Emitter& e) const override {
    emit_tree(c, size, true, e);
  }

  [[nodiscard]] int default_channels(const Communicator& c) const override {
    return c.nodes() > 1 ? CollectiveAlgorithm::default_channels(c) : 2;
  }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op /*op*/, Proto proto,
                                             double size) const override {
    using namespace chunk_rules;
    if (proto == Proto::ll128 && c.nodes() > 1) return ll128_across_nodes(c, size);
    PipelineShape s;
    if (proto != Proto::simple) return s;  // LL and LL128 hand on every line with its own flag
    // An intra-node chain of the node's ranks, then a binary tree over the nodes.
    // NCCL 2.20 and later run Tree/Simple in whole steps at every size (src/enqueue.cc,
    // calcCollChunking: only CollNet, Tree/LL128 and PAT shrink the chunk; 2.19 and before
    // halved it for smaller messages, down to 32 KiB).
    s.depth = (c.ranks_per_node() - 1) + ceil_log2(c.nodes());
    s.pipelines = channels(c);
    s.chunk_bytes = step_bytes(c);
    // A chunk goes up the node's chain and the tree of nodes, then down both: each hop stores
    // and forwards a whole step (prims_simple.h hands a slice on when it is written).
    s.path.intra_stages = 2 * (c.ranks_per_node() - 1);
    s.path.net_stages = 2 * ceil_log2(c.nodes());
    // The crossings that share the busiest NIC direction (the data time's): on 2 nodes one tree's
    // up and the other's down; from 3 nodes the representative node is interior in one tree (up
    // to its parent, down to two children) and a leaf in the other (up).
    s.path.net_shared = c.nodes() == 2 ? 2 : 4;
    return s;
  }

  [[nodiscard]] double nccl_busbw(const Communicator& c, Op op, Proto p, double bw,
                                  double /*nvlink_GBps*/) const override {
    const auto& t = c.params().tuner;
    const int g = static_cast<int>(c.gpu_generation());
    const int ni = nccl_node_index(c);
    const double nch = nccl_graph_channels(channels(c));
    if (op == Op::all_reduce) bw = std::min(bw * t.tree, nch * t.tree_cap_GBps[g][ni]);
    if (p == Proto::ll) bw = std::min(bw * t.tree_ll, nccl_ll_max_GBps(c));
    if (p == Proto::ll128) {
      bw = std::min(bw * (c.nodes() == 1 ? t.tree_ll128_single_node : t.tree_ll128_multi_node),
                    nch * t.tree_ll128_cap_GBps[g][ni]);
    }
    return bw;
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op op, Proto p, double /*size*/) const override {
    const NcclLatencyTerms t = nccl_latency_terms(c, Algo::tree, p);
    double lat = t.base;
    if (op == Op::all_reduce) {
      lat += 2.0 * (static_cast<double>(c.ranks_per_node() - 1) * t.intra +
                    static_cast<double>(nccl_log2i(static_cast<double>(c.nodes()))) * t.inter);
    }
    return lat;
  }
  [[nodiscard]] double nccl_bw_correction(const Communicator& c, Op op, Proto p, double size) const override {
    return op == Op::all_reduce ? nccl_tree_correction(c, p, size, 23) : 1.0;
  }
  [[nodiscard]] Algo nccl_graph(const Communicator& c, Op op) const override {
    // Inside one node NCCL's tree is a chain through the ranks, searched over the same links at
    // the same speeds as its rings: its graph bandwidth is the ring's (gpufabric's chain pattern
    // would differ from NCCL's view where per-connection limits apply). Across nodes the tree's
    // own pattern stands for its graph (it crosses the network with half a ring's traffic).
    return op == Op::all_reduce && c.nodes() == 1 ? Algo::ring : Algo::tree;
  }
};

constinit const Tree instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::tree = &instance;

}  // namespace gf::comm
