// NCCL's ring: every rank sends to the next around one ring per channel, node by node. It runs
// every operation but the point-to-point ones, with every protocol, and needs no pipeline fill
// (every rank starts sending its own chunk at once), except the chunk LL128 stores and forwards
// at each network step (pipeline_shape below).
#include <algorithm>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/chunk_rules.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

class Ring final : public CollectiveAlgorithm {
public:
  constexpr Ring() : CollectiveAlgorithm({.id = Algo::ring, .name = "Ring"}) {}

  [[nodiscard]] bool available(const Communicator& /*c*/, Op op, bool /*nvls_type*/) const override {
    return !is_point_to_point(op);
  }

  [[nodiscard]] double protocol_factor(const Communicator& c, Op op, Proto p) const override {
    return ring_protocol_factor(c, op, p);
  }
  [[nodiscard]] double latency_us(const Communicator& c, Op op, Proto p) const override {
    return ring_latency_us(c, op, latency_terms(c, p, Algo::ring, Algo::ring));
  }

  void emit(const Communicator& c, Op op, double size, const PatternScope& scope, Emitter& e) const override {
    emit_ring(c, op, size, scope.root, e);
  }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op op, Proto proto, double size) const override {
    // Ring/LL128 across nodes. Inside a node each 128-byte line is handed on with its own flag,
    // but NCCL's network proxy posts an LL128 step only once every line of it is written
    // (src/transport/net.cc, sendProxyProgress), and the receiving GPU reads it only once the
    // whole step has landed: each network hop stores and forwards the ring's chunk. That does
    // not slow the steady stream (the NIC sends one slot while the GPU fills the next) but adds
    // a chunk time at every network hop on the ring's critical path: NCCL's own count of them
    // (tuning.cc, nInterSteps) is 2 (nodes - 1) for all_reduce and nodes - 1 for all_gather
    // and reduce_scatter. The chunk is one rank's share of a channel per ring step, at most an
    // LL128 buffer step.
    const bool partitioned = op == Op::all_reduce || op == Op::all_gather || op == Op::reduce_scatter;
    if (proto != Proto::ll128 || c.nodes() < 2 || !partitioned) return {};
    PipelineShape s;
    s.pipelines = channels(c);
    const double per_step = size / (static_cast<double>(c.ranks()) * static_cast<double>(s.pipelines));
    const double loops = std::max(1.0, std::ceil(per_step / chunk_rules::ll128_step_data_bytes()));
    s.chunk_bytes = per_step / loops;
    s.stream_chunks = loops * static_cast<double>(nccl_ring_steps(op, c.ranks()));
    s.serial_stages = op == Op::all_reduce ? 2 * (c.nodes() - 1) : c.nodes() - 1;
    return s;
  }

  [[nodiscard]] double nccl_algbw_ratio(Op op, long ranks) const override {
    return static_cast<double>(ranks) / static_cast<double>(nccl_ring_steps(op, ranks));
  }
  [[nodiscard]] double nccl_busbw(const Communicator& c, Op /*op*/, Proto p, double bw,
                                  double /*nvlink_GBps*/) const override {
    const auto& t = c.params().tuner;
    const int g = static_cast<int>(c.gpu_generation());
    const double nch = nccl_graph_channels(channels(c));
    if (p == Proto::ll) bw = std::min(nccl_ll_max_GBps(c), bw * t.ring_ll);
    if (p == Proto::ll128) bw = std::min(bw * t.ring_ll128, nch * t.ring_ll128_cap_GBps[g][nccl_node_index(c)]);
    return bw;
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op op, Proto p, double size) const override {
    const auto& t = c.params().tuner;
    const long nodes = c.nodes();
    const NcclLatencyTerms terms = nccl_latency_terms(c, Algo::ring, p);
    double lat = terms.base;
    if (op == Op::broadcast || op == Op::reduce) {
      lat += terms.hw;
    } else {
      double overhead = 0;
      if (nodes > 1) {
        overhead = c.amd_cpu() ? t.net_overhead_amd_us : t.net_overhead_intel_us;
        if (p == Proto::simple) overhead *= 3;
      }
      const double intra = std::max(terms.intra, overhead);
      const long nsteps = nccl_ring_steps(op, c.ranks());
      const long inter_steps = nodes == 1 ? 0 : op == Op::all_reduce ? 2 * (nodes - 1) : nodes - 1;
      lat += static_cast<double>(nsteps - inter_steps) * intra + static_cast<double>(inter_steps) * terms.inter;
    }
    // NCCL's "plateau effect of ring" (tuning.cc): an all_reduce across nodes with at least 64
    // bytes per rank and channel takes its latency times a factor by GPU generation.
    if (p == Proto::simple && nodes > 1 && op == Op::all_reduce &&
        size / (channels(c) * static_cast<double>(c.ranks())) >= 64) {
      lat *= c.gpu_generation() < GpuGeneration::ampere ? t.plateau_before_sm80 : t.plateau_sm80;
    }
    return lat;
  }
};

constinit const Ring instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::ring = &instance;

}  // namespace gf::comm
