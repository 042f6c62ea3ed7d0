#include "comm/nccl_tuner.hpp"

#include <algorithm>
#include <cmath>

#include "comm/algorithm.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/nccl_params.hpp"

namespace gf::comm {

Seconds nccl_model_time(const Communicator& c, Op op, Algo a, Proto p, double size, Seconds graph_time,
                        double nvlink_GBps) {
  if (c.ranks() < 2) return Seconds(0);
  const CollectiveAlgorithm& algo = algorithm(a);
  const double ratio = algo.nccl_algbw_ratio(op, c.ranks());
  // NCCL's graph bus bandwidth: what the pattern's traffic reaches, as a bus bandwidth.
  const double graph_algbw_GBps = graph_time.value() > 0 ? size / graph_time.value() / 1e9 : 1e9;
  double bw = algo.nccl_busbw(c, op, p, graph_algbw_GBps / ratio, nvlink_GBps) * ratio;  // algbw, GB/s
  if (!(bw > 0)) return Seconds(-1);
  const double lat = algo.nccl_latency_us(c, op, p, size);
  // NCCL's measured shortfall at medium sizes (Tree; NVLSTree on Blackwell).
  bw *= algo.nccl_bw_correction(c, op, p, size);
  return microseconds(lat + size / (1000.0 * bw));
}

double nccl_algbw_ratio(Op op, Algo algo, long ranks) { return algorithm(algo).nccl_algbw_ratio(op, ranks); }

double nccl_tree_correction(const Communicator& c, Proto p, double size, int sizes) {
  const long log_size = nccl_log2i(std::floor(size / 64));
  if (size < 64 || log_size >= sizes) return 1.0;
  return c.params().tuner.tree_correction[static_cast<int>(p)][log_size];
}

bool nccl_p2p_ll_available(const Communicator& c) {
  // Point-to-point connections across the network share their buffers, and those have no LL
  // buffer unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (default 0, src/init.cc; src/transport/net.cc
  // allocates LL only for unshared connections or on request, NCCL 2.19 to 2.30); without one,
  // addP2pToPlan (src/enqueue.cc) falls back to Simple at every size. A transfer that crosses
  // nodes is as slow as its network part, so the whole operation runs Simple.
  return c.nodes() == 1 || c.env().p2p_net_ll_buffers();
}

Proto nccl_p2p_protocol(const Communicator& c, double peer_bytes, int channels) {
  return peer_bytes <= std::max(1, channels) * c.params().tuner.p2p_ll_threshold_bytes ? Proto::ll : Proto::simple;
}

}  // namespace gf::comm
