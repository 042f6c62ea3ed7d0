// Point-to-point (alltoall, sendrecv): NCCL sends to each peer directly, on a channel count
// that grows with the size, with LL up to NCCL_P2P_LL_THRESHOLD and Simple above (no tuner,
// no LL128). The operation, not NCCL_ALGO, selects it.
#include <algorithm>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/p2p_schedule.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/nccl_tuner.hpp"
#include "comm/p2p_channels.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

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

class P2p final : public CollectiveAlgorithm {
public:
  constexpr P2p()
      : CollectiveAlgorithm({.id = Algo::p2p,
                             .name = "P2P",
                             .forceable = false,
                             .protocols = proto_bit(Proto::ll) | proto_bit(Proto::simple)}) {}

  [[nodiscard]] bool available(const Communicator& /*c*/, Op op, bool /*nvls_type*/) const override {
    return is_point_to_point(op);
  }
  [[nodiscard]] Proto forced_protocol(const Communicator& c, Proto p) const override {
    // NCCL_PROTO does not reach point-to-point transfers: LL where there are no LL buffers
    // (across nodes, by default) runs Simple.
    return p == Proto::ll && !nccl_p2p_ll_available(c) ? Proto::simple : p;
  }
  [[nodiscard]] std::optional<Proto> untuned_protocol(const Communicator& c, Op op, double size) const override {
    const double bytes = p2p_peer_bytes(c, op, size);
    const int n = p2p_channels(c, bytes);
    return nccl_p2p_protocol(c, bytes, n > 0 ? n : 2);
  }

  [[nodiscard]] double latency_us(const Communicator& c, Op op, Proto p) const override {
    return ring_latency_us(c, op, latency_terms(c, p, Algo::ring, Algo::ring));
  }
  [[nodiscard]] double schedule_latency_us(const Communicator& c, Op op, Proto p, double size) const override {
    return p2p_schedule_latency_us(c, op, p, size);
  }
  void adjust_wire(const Communicator& c, Op op, Proto p, double size, WireTerms& w) const override {
    // Transfers inside a node may run on fewer channels than the links could feed (NCCL's
    // channel count per peer grows with the size): each channel moves at most its copy rate.
    if (p == Proto::simple) w.floor = std::max(w.floor, p2p_channel_time(c, op, size).value());
  }

  void emit(const Communicator& c, Op op, double size, const PatternScope& scope, Emitter& e) const override {
    switch (op) {
      case Op::alltoall: emit_alltoall(c, size, e); return;
      case Op::sendrecv:
        for (long a = 0; a < c.ranks(); ++a)
          if (scope.sender < 0 || a == scope.sender) e.edge(a, (a + 1) % c.ranks(), size);
        return;
      default: emit_ring(c, op, size, scope.root, e); return;
    }
  }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op op, Proto p, double size) const override {
    PipelineShape s;
    if (p == Proto::simple) s.own_rate_fill_s = p2p_net_copy_fill(c, op, size).value();
    return s;
  }

  [[nodiscard]] int reported_channels(const Communicator& c, Op op, double size) const override {
    const int n = p2p_channels(c, p2p_peer_bytes(c, op, size));
    return n > 0 ? n : channels(c);
  }
};

constinit const P2p instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::p2p = &instance;

}  // namespace gf::comm
