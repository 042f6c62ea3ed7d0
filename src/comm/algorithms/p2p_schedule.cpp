#include "comm/algorithms/p2p_schedule.hpp"

#include <algorithm>
#include <cmath>

#include "comm/algorithm.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/communicator.hpp"
#include "comm/nccl_params.hpp"

namespace gf::comm {

namespace {

int pow2_up(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

double div_up(double a, double b) { return std::ceil(a / b); }

// Channels one transfer is striped over (addP2pToPlan): start from nChannelsMin (the per-peer
// count, halved while it and every rank would not fit the pool), one per min part, doubled while
// a part exceeds the max part, up to the per-peer count. Parts are a step / 2 to a step across
// nodes and a step / 8 to 32 steps inside one (the step: the p2p chunk).
int channels_per_op(const Communicator& c, int channels, int per_peer, double bytes) {
  const auto& p = c.params().p2p;
  const bool net = c.nodes() > 1;
  const double step = net ? p.net_chunk_bytes : p.nvl_chunk_bytes;
  const double min_part = net ? step / 2 : step / 8;
  const double max_part = net ? step : step * 32;
  int min_channels = per_peer;
  while (static_cast<long>(min_channels) * c.ranks() > channels && min_channels > 1) min_channels /= 2;
  if (bytes <= 0) return 1;
  int n = static_cast<int>(std::min<double>(min_channels, div_up(bytes, min_part)));
  n = std::max(1, n);
  double part = std::max(min_part, div_up(bytes, n));
  while (part > max_part && n <= per_peer / 2) {
    n *= 2;
    part = div_up(bytes, n);
  }
  return n;
}

}  // namespace

P2pSchedule p2p_schedule(const Communicator& c, Op op, double size) {
  P2pSchedule s;
  if (c.ranks() < 2) return s;
  const auto& n = c.params();
  const bool alltoall = op == Op::alltoall;
  s.peers = alltoall ? c.ranks() - 1 : 1;
  s.remote_peers = alltoall ? c.ranks() - c.ranks_per_node() : (c.nodes() > 1 ? 1 : 0);
  // p2pnChannels (src/graph/paths.cc, ncclTopoComputeP2pChannels): the collective channels, up
  // to NCCL_MAX_P2P_NCHANNELS, rounded up to a power of two; the pool NCCL prints in one node.
  s.channels = c.nodes() > 1 ? std::min(n.p2p.channels, pow2_up(algorithm(Algo::ring).channels(c))) : n.p2p.channels;
  // p2pnChannelsPerPeer: across nodes NCCL_NCHANNELS_PER_NET_PEER, halved while the peers' rounds
  // (8 to a batch) would not fit the pool in one pass; inside a node the per-peer pool.
  int per_peer = c.nodes() > 1 ? n.p2p_schedule.net_channels_per_peer : n.p2p.channels_per_peer;
  const long batches = static_cast<long>(div_up(static_cast<double>(c.ranks()), n.p2p_schedule.ops_per_batch));
  if (c.nodes() > 1) {
    while (static_cast<long>(per_peer) * batches > s.channels && per_peer > 1) per_peer /= 2;
  } else {
    per_peer = std::min(per_peer, s.channels);
  }
  const double peer_bytes = alltoall ? size / static_cast<double>(c.ranks()) : size;
  s.channels_per_op = channels_per_op(c, s.channels, per_peer, peer_bytes);
  s.concurrent = std::max<long>(1, s.channels / s.channels_per_op) * n.p2p_schedule.ops_per_batch;
  s.waves = static_cast<long>(div_up(static_cast<double>(s.peers), static_cast<double>(s.concurrent)));
  return s;
}

double p2p_schedule_latency_us(const Communicator& c, Op op, Proto p, double size) {
  if (op != Op::alltoall || c.ranks() < 2) return 0;
  const P2pSchedule s = p2p_schedule(c, op, size);
  const LatencyTerms t = latency_terms(c, p, Algo::ring, Algo::ring);
  const double step = c.nodes() > 1 ? t.inter : t.intra;
  // Each further wave waits for the one before it on the same channels.
  double us = static_cast<double>(std::max<long>(0, s.waves - 1)) * step;
  // NCCL's network post overhead (getNetOverhead in tuning.cc: 1 us on Intel, 2 on AMD), once
  // for the send and once for the receive of every remote peer, on the rank's one proxy thread.
  if (s.remote_peers > 0) {
    const double post = c.amd_cpu() ? c.params().tuner.net_overhead_amd_us : c.params().tuner.net_overhead_intel_us;
    us += 2.0 * static_cast<double>(s.remote_peers) * post;
  }
  return us;
}

}  // namespace gf::comm
