#include "comm/algorithms/model_terms.hpp"

#include <algorithm>
#include <cmath>

#include "comm/communicator.hpp"

namespace gf::comm {

LatencyTerms latency_terms(const Communicator& c, Proto p, Algo base_row, Algo hop_row) {
  const auto& n = c.params();
  auto hop = [&](HopKind k) { return std::max(0.0, n.hop_us(k, hop_row, p)); };
  LatencyTerms t;
  t.base = std::max(0.0, n.base_us(base_row, p));
  t.intra = hop(c.intra_hop());
  // NCCL's network figures were measured on InfiniBand; slower endpoints (TCP, EFA) add the
  // difference of their one-way latency to every step across the network.
  t.inter = hop(HopKind::net) +
            std::max(0.0, c.topology().network().endpoint_latency.value() * 1e6 - n.net_reference_latency_us);
  t.nvlink = hop(HopKind::nvlink);
  if (c.nodes() > 1) {
    // NCCL's network post overhead per step (1 us on Intel, 2 on AMD; three posts with Simple)
    // bounds every step once a collective crosses nodes: each step's data goes through the
    // network proxy's posts. NCCL's tuner adds it to rings only ("Inter-node rings still have
    // to launch nsteps * net overhead", tuning.cc); gpufabric's time adds it to trees too,
    // whose network steps go through the same proxy (with rings only, the core set's small
    // multi-node rows move from 31.7% to 35.6% MAPE, the A100 IB rows better, the EFA and RoCE
    // rows worse).
    const double post = c.amd_cpu() ? n.tuner.net_overhead_amd_us : n.tuner.net_overhead_intel_us;
    t.intra = std::max(t.intra, p == Proto::simple ? 3.0 * post : post);
  }
  return t;
}

double ring_latency_us(const Communicator& c, Op op, const LatencyTerms& t) {
  const long ranks = c.ranks();
  const long nodes = c.nodes();
  const long steps = op == Op::all_reduce                               ? 2 * (ranks - 1)
                     : op == Op::all_gather || op == Op::reduce_scatter ? ranks - 1
                                                                        : ranks;
  const long inter_steps = op == Op::all_reduce                               ? (nodes > 1 ? 2 * nodes : 0)
                           : op == Op::all_gather || op == Op::reduce_scatter ? nodes - 1
                                                                              : (nodes > 1 ? nodes : 0);
  double us = t.base;
  if (is_point_to_point(op)) {
    // Point-to-point operations send to every peer at once: one step's latency (an
    // assumption; NCCL's tuner has no figure for them).
    us += nodes > 1 ? t.inter : t.intra;
  } else {
    us += static_cast<double>(steps - inter_steps) * t.intra + static_cast<double>(inter_steps) * t.inter;
  }
  return us;
}

double ring_protocol_factor(const Communicator& c, Op op, Proto p) {
  const bool ar_like = c.nodes() > 1 || op == Op::all_reduce || op == Op::reduce;
  double f = c.params().factor[ar_like ? 0 : 1][static_cast<int>(p)];
  if (p == Proto::ll128 && c.ranks_per_node() < 2) f = c.params().ll128_one_gpu_per_node;  // one GPU per node
  return f;
}

}  // namespace gf::comm
