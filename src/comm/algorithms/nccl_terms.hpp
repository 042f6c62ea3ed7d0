#pragma once
// The pieces of NCCL's tuner (src/graph/tuning.cc) that several algorithms share: its integer
// log, its ring steps, its table indices, its latency figures and NVLS's bus bandwidth.
#include <optional>

#include "comm/collective.hpp"
#include "comm/communicator.hpp"

namespace gf::comm {

// NCCL's log2i: floor(log2(n)), 0 for n <= 1 (inline: the tuner takes it for every candidate).
inline long nccl_log2i(double n) {
  long r = 0;
  while (n >= 2) {
    n /= 2;
    ++r;
  }
  return r;
}
// Steps of a ring: 2 (n - 1) for all_reduce, n - 1 for all_gather and reduce_scatter, n otherwise.
inline long nccl_ring_steps(Op op, long ranks) {
  if (op == Op::all_reduce) return 2 * (ranks - 1);
  if (op == Op::all_gather || op == Op::reduce_scatter) return ranks - 1;
  return ranks;
}
// NCCL's node-count index into its tables: 1 node, 2 nodes, more.
inline int nccl_node_index(const Communicator& c) { return c.nodes() <= 2 ? static_cast<int>(c.nodes()) - 1 : 2; }
// The channels of NCCL's search graph that its tuner multiplies its per-channel figures by
// (graphs[a]->nChannels in tuning.cc): half the channels it runs, since ncclTopoPostset
// (src/graph/connect.cc) duplicates every searched ring and tree channel once.
inline double nccl_graph_channels(int runtime_channels) { return runtime_channels < 2 ? 1.0 : runtime_channels / 2; }
// NCCL's cap on LL bus bandwidth, GB/s.
double nccl_ll_max_GBps(const Communicator& c);

// NCCL's latency figures for (a, p), microseconds.
struct NcclLatencyTerms {
  double base = 0;
  double intra = 0;  // a hop inside the node (NVLink or PCIe)
  double inter = 0;  // a hop across the network (Tree's figure with one GPU per node: fully exposed)
  double hw = 0;     // a hop on the link a single-step operation crosses (inside one node, else the network)
};
NcclLatencyTerms nccl_latency_terms(const Communicator& c, Algo a, Proto p);

// "Convert to NVLS busBW": a GPU's NVLink rate x NCCL's NVLS efficiency x (nCh - 1) / nCh,
// doubled for all_reduce ("pipelines two operations"); nothing where NCCL disables NVLS.
std::optional<double> nccl_nvls_busbw(const Communicator& c, Op op, int channels, double nvlink_GBps);

}  // namespace gf::comm
