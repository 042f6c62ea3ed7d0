#include "comm/p2p_channels.hpp"

#include <algorithm>
#include <cmath>

#include "comm/algorithms/chunk_rules.hpp"
#include "comm/nccl_params.hpp"

namespace gf::comm {

namespace {

double div_up(double a, double b) { return std::ceil(a / b); }

// NCCL's per-channel copy rate over NVLink for this GPU's NVLink generation, bytes/s; 0 if
// unknown.
double channel_rate(const Communicator& c) {
  const auto& gpu = c.topology().gpu_spec();
  if (!gpu.nvlink || gpu.nvlink->generation <= 0) return 0;
  const auto& rates = c.params().p2p_channel_GBps;
  const auto it = rates.find(gpu.nvlink->generation);
  return it == rates.end() ? 0 : it->second * 1e9;
}

}  // namespace

double p2p_peer_bytes(const Communicator& c, Op op, double size) {
  return op == Op::alltoall ? size / static_cast<double>(c.ranks()) : size;
}

int p2p_channels(const Communicator& c, double peer_bytes) {
  // Only inside one NVLink node does the count bound the time. Across nodes NCCL caps each
  // channel's part at one network chunk, so the count reaches its maximum from a few hundred
  // KiB on and the network is the limit; PCIe peers get 2 channels per peer, and NCCL gives
  // no per-channel rate for PCIe.
  if (c.nodes() != 1 || !c.nvlink_intra() || c.ranks() < 2 || peer_bytes <= 0) return 0;
  const auto& p = c.params().p2p;
  const int max_channels = p.channels_per_peer;
  // "Try to use all channels, but one channel per operation."
  int min_channels = max_channels;
  while (static_cast<long>(min_channels) * c.ranks() > p.channels && min_channels > 1) min_channels /= 2;
  const double min_part = p.nvl_chunk_bytes / 8;
  const double max_part = p.nvl_chunk_bytes * 32;
  int n = static_cast<int>(std::min<double>(min_channels, div_up(peer_bytes, min_part)));
  double part = std::max(min_part, div_up(peer_bytes, n));
  while (part > max_part && n <= max_channels / 2) {
    n *= 2;
    part = div_up(peer_bytes, n);
  }
  return n;
}

Seconds p2p_channel_time(const Communicator& c, Op op, double size) {
  if (!is_point_to_point(op)) return Seconds(0);
  const double rate = channel_rate(c);
  if (rate <= 0) return Seconds(0);
  const auto& p = c.params().p2p;
  if (op == Op::sendrecv) {
    const int n = p2p_channels(c, size);
    return Seconds(n > 0 ? size / (n * rate) : 0.0);
  }
  // alltoall: every peer's transfer runs at once, each on its own channels, all from the
  // rank's pool of p2p channels.
  const double peer_bytes = p2p_peer_bytes(c, op, size);
  const int n = p2p_channels(c, peer_bytes);
  if (n <= 0) return Seconds(0);
  const double peers = static_cast<double>(c.ranks() - 1);
  const double in_use = std::min<double>(p.channels, peers * n);
  return Seconds(std::max(peer_bytes / (n * rate), peers * peer_bytes / (in_use * rate)));
}

Seconds p2p_net_copy_fill(const Communicator& c, Op op, double size) {
  if (!is_point_to_point(op) || c.nodes() < 2 || c.ranks() < 2 || size <= 0) return Seconds(0);
  const double rate = channel_rate(c);
  if (rate <= 0) return Seconds(0);
  const double peer_bytes = p2p_peer_bytes(c, op, size);
  return Seconds(2.0 * std::min(chunk_rules::p2p_net_chunk_bytes(c, peer_bytes), peer_bytes) / rate);
}

}  // namespace gf::comm
