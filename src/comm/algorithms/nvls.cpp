// NVLS (NVLink SHARP, one node): every GPU sends its buffer into the NVSwitch, which reduces it
// and multicasts the result back. all_reduce of the types and operations SHARP reduces, Simple
// only, on NCCL_NVLS_NCHANNELS channels whatever NCCL_MIN/MAX_NCHANNELS say.
#include <algorithm>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/chunk_rules.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/algorithms/requirements.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

class Nvls final : public CollectiveAlgorithm {
public:
  constexpr Nvls()
      : CollectiveAlgorithm({.id = Algo::nvls,
                             .name = "NVLS",
                             .protocols = proto_bit(Proto::simple),
                             .needs_nvls_type = true,
                             .follows_channel_env = false}) {}

  [[nodiscard]] bool available(const Communicator& c, Op op, bool nvls_type) const override {
    return op == Op::all_reduce && c.nvls_capable() && nvls_type && c.nodes() == 1;
  }
  [[nodiscard]] Proto forced_protocol(const Communicator& /*c*/, Proto /*p*/) const override { return Proto::simple; }
  void check_hardware(const Communicator& c) const override { require_nvlink_sharp(c, id()); }
  [[nodiscard]] Algo fallback(const Communicator& c, Op op) const override {
    return c.nodes() > 1 && algorithm(Algo::nvls_tree).available(c, op, true) ? Algo::nvls_tree : Algo::ring;
  }

  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto /*p*/) const override {
    // What an NVLS all_reduce's fixed part takes (NCCL's table figure is for its tuner).
    const auto& n = c.params();
    return n.nvls_latency_base_us + n.nvls_latency_per_rank_us * static_cast<double>(c.ranks() - 1);
  }

  void emit(const Communicator& c, Op /*op*/, double size, const PatternScope& /*scope*/, Emitter& e) const override {
    emit_nvls(c, size, e);
  }

  [[nodiscard]] int default_channels(const Communicator& c) const override { return c.params().nvls_channels; }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op /*op*/, Proto proto,
                                             double size) const override {
    using namespace chunk_rules;
    PipelineShape s;
    if (proto != Proto::simple) return s;  // LL and LL128 hand on every line with its own flag
    s.depth = 1;
    s.pipelines = channels(c) * heads(c);
    const double ops = static_cast<double>(s.pipelines);
    double chunk = nvls_chunk_bytes(c);
    chunk = cut_below(chunk, size, ops, 64, 65536);
    chunk = cut_below(chunk, size, ops, 8, 32768);
    s.chunk_bytes = cut_below(chunk, size, ops, 2, 16384);
    return s;
  }

  [[nodiscard]] double nccl_algbw_ratio(Op op, long ranks) const override {
    if (op == Op::all_gather || op == Op::reduce_scatter) return 1.0;
    return static_cast<double>(ranks) / static_cast<double>(nccl_ring_steps(op, ranks));
  }
  [[nodiscard]] double nccl_busbw(const Communicator& c, Op op, Proto /*p*/, double /*graph_busbw_GBps*/,
                                  double nvlink_GBps) const override {
    return nccl_nvls_busbw(c, op, channels(c), nvlink_GBps).value_or(0.0);
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op /*op*/, Proto p, double /*size*/) const override {
    const NcclLatencyTerms t = nccl_latency_terms(c, Algo::nvls, p);
    double lat = t.intra;
    if (c.nodes() > 1) lat += t.inter;
    return lat;
  }
};

constinit const Nvls instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::nvls = &instance;

}  // namespace gf::comm
