// CollNetDirect (SHARP in the network switches). all_reduce: the node reduces internally
// (through NVLS where the NVSwitch has it, otherwise as a ring reduce-scatter and all-gather),
// each NIC sends its share up to the switch and receives the reduced share back. all_gather and
// reduce_scatter (NCCL 2.20.3 and later, src/device/all_gather.h and reduce_scatter.h): one rank
// per NIC, each rail's blocks go through its SHARP switch (see emit_collnet_rails). Across nodes
// of an NVSwitch server, Simple only; NCCL tunes it in only with NCCL_COLLNET_ENABLE=1.
#include <algorithm>
#include <vector>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/chunk_rules.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/algorithms/requirements.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

namespace {

class CollNetDirect final : public CollectiveAlgorithm {
public:
  constexpr CollNetDirect()
      : CollectiveAlgorithm({.id = Algo::collnet_direct,
                             .name = "CollNetDirect",
                             .alias = "CollNet",
                             .tuned_by_default = false,
                             .collnet = true,
                             .protocols = proto_bit(Proto::simple),
                             .needs_nvls_type = true}) {}

  [[nodiscard]] bool available(const Communicator& c, Op op, bool nvls_type) const override {
    if (c.nodes() < 2 || !c.sharp_capable()) return false;
    if (op == Op::all_reduce) return c.nvls_capable() && nvls_type;
    if (op != Op::all_gather && op != Op::reduce_scatter) return false;
    // NCCL (tuning.cc): "AllGather/ReduceScatter requires 1:1 GPU:NIC", every rank a head of its
    // own NIC; and CollNetDirect needs an NVSwitch in the node (nvsCount == 0 disables it).
    if (!c.topology().node().has_nvswitch()) return false;
    const std::vector<int> heads = collnet_heads(c);
    return std::count_if(heads.begin(), heads.end(), [](int g) { return g >= 0; }) == c.ranks_per_node();
  }
  [[nodiscard]] Proto forced_protocol(const Communicator& /*c*/, Proto /*p*/) const override { return Proto::simple; }
  void check_hardware(const Communicator& c) const override { require_network_sharp(c, id()); }

  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto p) const override {
    const LatencyTerms t = latency_terms(c, p, Algo::collnet_direct, Algo::collnet_direct);
    const long ppn = c.ranks_per_node();
    double us = t.base;
    us += 2.0 * (std::min(1.0, static_cast<double>(ppn - 1)) * t.intra +
                 static_cast<double>(ppn - 1) * c.params().collnet_arity_us) +
          t.inter;
    return us;
  }

  void emit(const Communicator& c, Op op, double size, const PatternScope& /*scope*/, Emitter& e) const override {
    if (op == Op::all_gather || op == Op::reduce_scatter) {
      emit_collnet_rails(c, op, size, e);
      return;
    }
    if (c.nvls_capable()) {
      emit_nvls(c, size, e);
    } else {
      const int p = c.ranks_per_node();
      const double vol = 2.0 * (p - 1) / p * size;
      for (long k = 0; k < c.nodes(); ++k) {
        for (int j = 0; j < p; ++j) e.edge(k * p + j, k * p + (j + 1) % p, vol);
      }
    }
    emit_collnet_nics(c, size, e);
  }

  [[nodiscard]] PipelineShape pipeline_shape(const Communicator& c, Op /*op*/, Proto proto,
                                             double size) const override {
    using namespace chunk_rules;
    PipelineShape s;
    if (proto != Proto::simple) return s;  // LL and LL128 hand on every line with its own flag
    s.depth = 1;
    s.stages = 4;  // to the node's heads, to the SHARP switch and back, to the node's ranks
    s.pipelines = channels(c) * heads(c);
    const double p = static_cast<double>(s.pipelines);
    double chunk = cut_below(step_bytes(c), size, p, 16, 131072);
    chunk = cut_below(chunk, size, p, 4, 65536);
    s.chunk_bytes = cut_below(chunk, size, p, 1, 32768);
    return s;
  }

  [[nodiscard]] double nccl_busbw(const Communicator& c, Op op, Proto p, double bw,
                                  double /*nvlink_GBps*/) const override {
    if (p != Proto::simple) return 0;
    if (op == Op::all_reduce) {
      // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed".
      const double nch = channels(c);
      double factor = static_cast<double>(c.ranks_per_node()) / nch;
      factor -= (factor - 1) / 2;
      bw /= factor;
      if (c.gpu_generation() >= GpuGeneration::hopper) bw *= 0.85;
    } else {
      // "ppn * std::min(bwIntra, bwInter * 0.9f)": the rails' network leg at 0.9 of its rate;
      // the graph's bandwidth here is that leg's (a rail's NVLink writes are p - 1 times wider).
      bw *= 0.9;
    }
    return bw;
  }
  [[nodiscard]] double nccl_latency_us(const Communicator& c, Op /*op*/, Proto p, double /*size*/) const override {
    const NcclLatencyTerms t = nccl_latency_terms(c, Algo::collnet_direct, p);
    const long ppn = c.ranks_per_node();
    double lat = t.base;
    lat += 2.0 * (std::min(1.0, static_cast<double>(ppn - 1)) * t.intra + static_cast<double>(ppn - 1) * 0.4) + t.inter;
    return lat;
  }
};

constinit const CollNetDirect instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::collnet_direct = &instance;

}  // namespace gf::comm
