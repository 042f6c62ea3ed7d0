// CollNetChain (SHARP in the network switches): the node reduces along a chain of its ranks
// towards a head next to a NIC and broadcasts the result back down it (NCCL's chain: no NVLS
// even where the NVSwitch has it); each NIC sends its share up to the switch and receives the
// reduced share back. all_reduce across nodes, Simple only; only when asked, as CollNetDirect.
#include <algorithm>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/chunk_rules.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/algorithms/requirements.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

class CollNetChain final : public CollectiveAlgorithm {
public:
  constexpr CollNetChain()
      : CollectiveAlgorithm({.id = Algo::collnet_chain,
                             .name = "CollNetChain",
                             .tuned_by_default = false,
                             .collnet = true,
                             .protocols = proto_bit(Proto::simple),
                             .fill_bounded_by_depth = true}) {}

  [[nodiscard]] bool available(const Communicator& c, Op op, bool /*nvls_type*/) const override {
    return op == Op::all_reduce && c.nodes() > 1 && c.sharp_capable();
  }
  [[nodiscard]] Proto forced_protocol(const Communicator& /*c*/, Proto /*p*/) const override { return Proto::simple; }
  void check_hardware(const Communicator& c) const override { require_network_sharp(c, id()); }

  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto p) const override {
    const LatencyTerms t = latency_terms(c, p, Algo::collnet_chain, Algo::collnet_chain);
    double us = t.base;
    us += 2.0 * static_cast<double>(c.ranks_per_node() - 1) * t.intra + t.inter;
    return us;
  }

  void emit(const Communicator& c, Op /*op*/, double size, const PatternScope& /*scope*/, Emitter& e) const override {
    const int p = c.ranks_per_node();
    const int nch = channels(c);
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
    emit_collnet_nics(c, size, e);
  }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op /*op*/, Proto proto,
                                             double size) const override {
    using namespace chunk_rules;
    PipelineShape s;
    if (proto != Proto::simple) return s;  // LL and LL128 hand on every line with its own flag
    s.depth = c.ranks_per_node();
    s.pipelines = channels(c);
    const double p = static_cast<double>(s.pipelines);
    const double d = static_cast<double>(s.depth);
    double chunk = halve_while(std::min(step_bytes(c), 262144.0), size, p, d * 64, 131072);
    chunk = halve_while(chunk, size, p, d * 8, 65536);
    s.chunk_bytes = halve_while(chunk, size, p, d, 32768);
    return s;
  }

  [[nodiscard]] double nccl_busbw(const Communicator& /*c*/, Op /*op*/, Proto p, double bw,
                                  double /*nvlink_GBps*/) const override {
    return p == Proto::simple ? bw : 0;
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op /*op*/, Proto p, double /*size*/) const override {
    const NcclLatencyTerms t = nccl_latency_terms(c, Algo::collnet_chain, p);
    double lat = t.base;
    lat += 2.0 * static_cast<double>(c.ranks_per_node() - 1) * t.intra + t.inter;
    return lat;
  }
};

constinit const CollNetChain instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::collnet_chain = &instance;

}  // namespace gf::comm
