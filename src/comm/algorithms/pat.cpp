// PAT (NCCL's parallel aggregated trees): all_gather and reduce_scatter across nodes with one
// GPU per node, in log2(ranks) steps. Its traffic is the ring's; no LL128 kernel.
#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"

namespace gf::comm {

namespace {

class Pat final : public CollectiveAlgorithm {
public:
  constexpr Pat()
      : CollectiveAlgorithm(
            {.id = Algo::pat, .name = "PAT", .protocols = proto_bit(Proto::ll) | proto_bit(Proto::simple)}) {}

  [[nodiscard]] bool available(const Communicator& c, Op op, bool /*nvls_type*/) const override {
    return (op == Op::all_gather || op == Op::reduce_scatter) && c.nodes() > 1 && c.ranks_per_node() == 1;
  }
  [[nodiscard]] Proto forced_protocol(const Communicator& /*c*/, Proto p) const override {
    return p == Proto::ll128 ? Proto::simple : p;
  }

  [[nodiscard]] double protocol_factor(const Communicator& c, Op op, Proto p) const override {
    return ring_protocol_factor(c, op, p);
  }
  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto p) const override {
    const LatencyTerms t = latency_terms(c, p, Algo::pat, Algo::pat);
    double us = t.base;
    us += log2_ceil(c.ranks()) * (c.nodes() > 1 ? t.inter : t.intra);
    return us;
  }

  void emit(const Communicator& c, Op op, double size, const PatternScope& scope, Emitter& e) const override {
    emit_ring(c, op, size, scope.root, e);
  }

  [[nodiscard]] double nccl_busbw(const Communicator& c, Op /*op*/, Proto /*p*/, double bw,
                                  double /*nvlink_GBps*/) const override {
    return bw * c.params().tuner.pat;
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op op, Proto p, double /*size*/) const override {
    const NcclLatencyTerms t = nccl_latency_terms(c, Algo::pat, p);
    double lat = t.base;
    if (op == Op::all_gather || op == Op::reduce_scatter) {
      lat += static_cast<double>(nccl_log2i(static_cast<double>(c.nodes()))) * (t.inter / 3.5) +
             static_cast<double>(c.ranks()) * 2.8;
    }
    return lat;
  }
};

constinit const Pat instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::pat = &instance;

}  // namespace gf::comm
