#include "comm/nccl_tuner.hpp"

#include <algorithm>
#include <cmath>

#include "comm/nccl_params.hpp"
#include "comm/pattern.hpp"

namespace gf::comm {

namespace {

// NCCL's log2i: floor(log2(n)), 0 for n <= 1.
long log2i(double n) {
  long r = 0;
  while (n >= 2) {
    n /= 2;
    ++r;
  }
  return r;
}

// NCCL's node-count index into its tables: 1 node, 2 nodes, more.
int node_index(const Communicator& c) { return c.nodes() <= 2 ? static_cast<int>(c.nodes()) - 1 : 2; }

// Steps of a ring: 2 (n - 1) for all_reduce, n - 1 for all_gather and reduce_scatter, n otherwise.
long ring_steps(Op op, long ranks) {
  if (op == Op::all_reduce) return 2 * (ranks - 1);
  if (op == Op::all_gather || op == Op::reduce_scatter) return ranks - 1;
  return ranks;
}

// busBw -> algBw as NCCL converts it ("ratio").
double algbw_ratio(Op op, Algo a, long ranks) {
  if (a != Algo::ring && (op == Op::all_gather || op == Op::reduce_scatter)) return 1.0;
  if (a == Algo::ring || a == Algo::nvls || a == Algo::nvls_tree)
    return static_cast<double>(ranks) / static_cast<double>(ring_steps(op, ranks));
  return 0.5;
}

// NCCL's bus bandwidth for (a, p), GB/s, from the graph's (Simple, steady-state) bus bandwidth.
double tuner_busbw(const Communicator& c, Op op, Algo a, Proto p, double graph_busbw_GBps, double nvlink_GBps) {
  const auto& t = c.params().tuner;
  const int g = static_cast<int>(c.gpu_generation());
  const int ni = node_index(c);
  const double nch = channels(c, a);
  const int ll_row = c.nodes() == 1 ? g : (c.amd_cpu() ? 1 : 0);
  const double ll_max = t.ll_max_GBps[ll_row][ni];
  double bw = graph_busbw_GBps;
  if (a == Algo::nvls || a == Algo::nvls_tree) {
    // "Convert to NVLS busBW": NVLink rate x NCCL's NVLS efficiency x (nCh - 1) / nCh, doubled
    // for all_reduce ("pipelines two operations").
    const double eff = t.nvls_efficiency[g];
    if (!(eff > 0) || nch < 2) return 0;
    const long ppn = c.ranks_per_node();
    const double intra = nvlink_GBps * eff * (nch - 1) / nch *
                         (op == Op::all_reduce ? 2.0 : static_cast<double>(ppn - 1) / static_cast<double>(ppn));
    bw = a == Algo::nvls ? intra : std::min(intra, graph_busbw_GBps);
    const double cap = t.nvls_tree_cap_GBps[g][ni];
    if (a == Algo::nvls_tree && cap > 0) bw = std::min(bw, nch * cap);
  }
  if (a == Algo::ring && p == Proto::ll) bw = std::min(ll_max, bw * t.ring_ll);
  if (a == Algo::ring && p == Proto::ll128) bw = std::min(bw * t.ring_ll128, nch * t.ring_ll128_cap_GBps[g][ni]);
  if (a == Algo::tree && op == Op::all_reduce) bw = std::min(bw * t.tree, nch * t.tree_cap_GBps[g][ni]);
  if (a == Algo::tree && p == Proto::ll) bw = std::min(bw * t.tree_ll, ll_max);
  if (a == Algo::tree && p == Proto::ll128) {
    bw = std::min(bw * (c.nodes() == 1 ? t.tree_ll128_single_node : t.tree_ll128_multi_node),
                  nch * t.tree_ll128_cap_GBps[g][ni]);
  }
  if (a == Algo::pat) bw *= t.pat;
  if ((a == Algo::collnet_direct || a == Algo::collnet_chain) && p != Proto::simple) return 0;
  if (a == Algo::collnet_direct && op == Op::all_reduce) {
    // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed".
    double factor = static_cast<double>(c.ranks_per_node()) / nch;
    factor -= (factor - 1) / 2;
    bw /= factor;
    if (c.gpu_generation() >= GpuGeneration::hopper) bw *= 0.85;
  }
  return bw;
}

double tuner_latency_us(const Communicator& c, Op op, Algo a, Proto p) {
  const auto& t = c.params().tuner;
  const long ranks = c.ranks();
  const long nodes = c.nodes();
  const long ppn = c.ranks_per_node();
  const HopKind intra_hw = c.nvlink_intra() ? HopKind::nvlink : HopKind::pcie;
  const HopKind hw = nodes == 1 ? intra_hw : HopKind::net;
  auto hop = [&](HopKind k, Algo algo) { return std::max(0.0, t.hop_us(k, algo, p)); };
  double lat = std::max(0.0, t.base_us(a, p));
  double intra = hop(intra_hw, a);
  // With one GPU per node NCCL uses the Tree network latency (latencies are fully exposed).
  const double inter = ppn == 1 ? hop(HopKind::net, Algo::tree) : hop(HopKind::net, a);
  const long nsteps = ring_steps(op, ranks);
  switch (a) {
    case Algo::ring:
      if (op == Op::broadcast || op == Op::reduce) {
        lat += hop(hw, a);
      } else {
        double overhead = 0;
        if (nodes > 1) {
          overhead = c.amd_cpu() ? t.net_overhead_amd_us : t.net_overhead_intel_us;
          if (p == Proto::simple) overhead *= 3;
        }
        intra = std::max(intra, overhead);
        const long inter_steps = nodes == 1 ? 0 : op == Op::all_reduce ? 2 * (nodes - 1) : nodes - 1;
        lat += static_cast<double>(nsteps - inter_steps) * intra + static_cast<double>(inter_steps) * inter;
      }
      break;
    case Algo::tree:
      if (op == Op::all_reduce)
        lat += 2.0 * (static_cast<double>(ppn - 1) * intra + static_cast<double>(log2i(nodes)) * inter);
      break;
    case Algo::collnet_direct:
      lat += 2.0 * (std::min(1.0, static_cast<double>(ppn - 1)) * intra + static_cast<double>(ppn - 1) * 0.4) + inter;
      break;
    case Algo::collnet_chain: lat += 2.0 * static_cast<double>(ppn - 1) * intra + inter; break;
    case Algo::nvls:
      lat = intra;
      if (nodes > 1) lat += inter;
      break;
    case Algo::nvls_tree: lat += intra + 2.0 * static_cast<double>(log2i(nodes)) * inter; break;
    case Algo::pat:
      if (op == Op::all_gather || op == Op::reduce_scatter)
        lat += static_cast<double>(log2i(nodes)) * (inter / 3.5) + static_cast<double>(ranks) * 2.8;
      break;
    default: break;
  }
  return lat;
}

}  // namespace

Seconds nccl_model_time(const Communicator& c, Op op, Algo a, Proto p, double size, Seconds graph_time,
                        double nvlink_GBps) {
  const auto& t = c.params().tuner;
  if (c.ranks() < 2) return Seconds(0);
  const double ratio = algbw_ratio(op, a, c.ranks());
  // NCCL's graph bus bandwidth: what the pattern's traffic reaches, as a bus bandwidth.
  const double graph_algbw_GBps = graph_time.value() > 0 ? size / graph_time.value() / 1e9 : 1e9;
  double bw = tuner_busbw(c, op, a, p, graph_algbw_GBps / ratio, nvlink_GBps) * ratio;  // algbw, GB/s
  if (!(bw > 0)) return Seconds(-1);
  double lat = tuner_latency_us(c, op, a, p);
  // Tree all_reduce, and NVLSTree on Blackwell x86 (every catalog CPU is x86), whose table runs
  // one size further.
  if (op == Op::all_reduce && a == Algo::tree) bw *= nccl_tree_correction(c, p, size, 23);
  if (op == Op::all_reduce && a == Algo::nvls_tree && c.gpu_generation() >= GpuGeneration::blackwell) {
    bw *= nccl_tree_correction(c, p, size, 24);
  }
  if (a == Algo::ring && p == Proto::simple && c.nodes() > 1 && op == Op::all_reduce &&
      size / (channels(c, Algo::ring) * static_cast<double>(c.ranks())) >= 64) {
    lat *= c.gpu_generation() < GpuGeneration::ampere ? t.plateau_before_sm80 : t.plateau_sm80;
  }
  return microseconds(lat + size / (1000.0 * bw));
}

double nccl_algbw_ratio(Op op, Algo algo, long ranks) { return algbw_ratio(op, algo, ranks); }

double nccl_tree_correction(const Communicator& c, Proto p, double size, int sizes) {
  const long log_size = log2i(std::floor(size / 64));
  if (size < 64 || log_size >= sizes) return 1.0;
  return c.params().tuner.tree_correction[static_cast<int>(p)][log_size];
}

Proto nccl_p2p_protocol(const Communicator& c, double peer_bytes, int channels) {
  return peer_bytes <= std::max(1, channels) * c.params().tuner.p2p_ll_threshold_bytes ? Proto::ll : Proto::simple;
}

}  // namespace gf::comm
