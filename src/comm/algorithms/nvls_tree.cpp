// NVLSTree (NVLink SHARP across nodes): NVLS reduces inside each node and a double binary tree
// between the nodes carries each head GPU's share. all_reduce of the types and operations SHARP
// reduces, Simple only, on NCCL_NVLS_NCHANNELS channels.
#include <algorithm>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/chunk_rules.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/algorithms/requirements.hpp"
#include "comm/nccl_tuner.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

class NvlsTree final : public CollectiveAlgorithm {
public:
  constexpr NvlsTree()
      : CollectiveAlgorithm({.id = Algo::nvls_tree,
                             .name = "NVLSTree",
                             .protocols = proto_bit(Proto::simple),
                             .needs_nvls_type = true,
                             .follows_channel_env = false,
                             .nodes_alike = false}) {}

  [[nodiscard]] bool available(const Communicator& c, Op op, bool nvls_type) const override {
    return op == Op::all_reduce && c.nvls_capable() && nvls_type && c.nodes() > 1;
  }
  [[nodiscard]] Proto forced_protocol(const Communicator& /*c*/, Proto /*p*/) const override { return Proto::simple; }
  void check_hardware(const Communicator& c) const override { require_nvlink_sharp(c, id()); }
  [[nodiscard]] Algo fallback(const Communicator& c, Op op) const override {
    return c.nodes() == 1 && algorithm(Algo::nvls).available(c, op, true) ? Algo::nvls : Algo::ring;
  }

  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto p) const override {
    const LatencyTerms t = latency_terms(c, p, Algo::nvls_tree, Algo::nvls_tree);
    double us = t.base;
    us += t.nvlink + 2.0 * log2_ceil(c.nodes()) * t.inter;
    return us;
  }

  [[nodiscard]] long representative_node(const Communicator& c) const override {
    return representative_tree_node(c.nodes());  // as for Tree
  }
  void emit(const Communicator& c, Op /*op*/, double size, const PatternScope& /*scope*/, Emitter& e) const override {
    emit_nvls(c, size, e);
    emit_tree(c, size, false, e);
  }

  [[nodiscard]] int default_channels(const Communicator& c) const override { return c.params().nvls_channels; }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op /*op*/, Proto proto,
                                             double size) const override {
    using namespace chunk_rules;
    PipelineShape s;
    if (proto != Proto::simple) return s;  // LL and LL128 hand on every line with its own flag
    s.depth = 1 + ceil_log2(c.nodes());
    // The kernel's warp groups in series (src/device/all_reduce.h, NCCL_ALGO_NVLS_TREE): scatter
    // into the NVLS buffer, NVLS reduce, each network crossing up the tree of nodes and down
    // again, NVLS multicast, gather out of the buffer.
    s.stages = 4 + 2 * ceil_log2(c.nodes());
    s.path.intra_stages = 4;
    s.path.net_stages = 2 * ceil_log2(c.nodes());
    // The crossings that share the busiest NIC direction (the data time's): on 2 nodes one tree's
    // up and the other's down; from 3 nodes the representative head is interior in one tree (up
    // to its parent, down to two children) and a leaf in the other (up).
    s.path.net_shared = c.nodes() == 2 ? 2 : 4;
    s.pipelines = channels(c) * heads(c);
    const double ops = static_cast<double>(s.pipelines);
    double chunk = cut_below(nvls_tree_start_chunk_bytes(c), size, ops, 32, 262144);
    chunk = cut_below(chunk, size, ops, 16, 131072);
    chunk = cut_below(chunk, size, ops, 4, 65536);
    s.chunk_bytes = cut_below(chunk, size, ops, 1, 32768);
    return s;
  }

  [[nodiscard]] double nccl_algbw_ratio(Op op, long ranks) const override {
    if (op == Op::all_gather || op == Op::reduce_scatter) return 1.0;
    return static_cast<double>(ranks) / static_cast<double>(nccl_ring_steps(op, ranks));
  }
  [[nodiscard]] double nccl_busbw(const Communicator& c, Op op, Proto /*p*/, double graph_busbw_GBps,
                                  double nvlink_GBps) const override {
    const int channel_count = channels(c);
    const double nch = channel_count;
    const auto intra = nccl_nvls_busbw(c, op, channel_count, nvlink_GBps);
    if (!intra) return 0;
    // NCCL's inter-node figure is the tree's network rate, bwInter per channel (twice that on two
    // nodes, where each NIC carries one tree level): a NIC's rate, not the algorithm bandwidth
    // over the ring's n / (2 (n - 1)). The traffic of the tree pattern reaches half of it (each
    // byte crosses the binding NIC up and down), so NCCL's figure is twice its algbw.
    const double tree_busbw = 2.0 * graph_busbw_GBps * nccl_algbw_ratio(op, c.ranks());
    double bw = std::min(*intra, tree_busbw);
    const double cap = c.params().tuner.nvls_tree_cap_GBps[static_cast<int>(c.gpu_generation())][nccl_node_index(c)];
    if (cap > 0) bw = std::min(bw, nch * cap);
    return bw;
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op /*op*/, Proto p, double /*size*/) const override {
    const NcclLatencyTerms t = nccl_latency_terms(c, Algo::nvls_tree, p);
    double lat = t.base;
    lat += t.intra + 2.0 * static_cast<double>(nccl_log2i(static_cast<double>(c.nodes()))) * t.inter;
    return lat;
  }
  [[nodiscard]] double nccl_bw_correction(const Communicator& c, Op op, Proto p, double size) const override {
    // NVLSTree on Blackwell x86 (every catalog CPU is x86) follows the tree's correction, whose
    // table runs one size further.
    if (op == Op::all_reduce && c.gpu_generation() >= GpuGeneration::blackwell)
      return nccl_tree_correction(c, p, size, 24);
    return 1.0;
  }
};

constinit const NvlsTree instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::nvls_tree = &instance;

}  // namespace gf::comm
