#pragma once
// NCCL's rules for the chunk size of its pipelined algorithms (src/enqueue.cc), shared by the
// algorithms' pipeline shapes (see comm/pipeline_fill.hpp for why the chunk matters).
#include <algorithm>
#include <cmath>

#include "comm/communicator.hpp"

namespace gf::comm::chunk_rules {

inline long ceil_log2(long n) { return n <= 1 ? 0 : static_cast<long>(std::ceil(std::log2(static_cast<double>(n)))); }

// Halve `chunk` while each pipeline would get fewer than `times` chunks, down to `floor`
// (NCCL's "while (nBytes / (nChannels*chunkSize) < depth*k && chunkSize > floor) chunkSize /= 2").
inline double halve_while(double chunk, double size, double pipelines, double times, double floor) {
  while (size / (pipelines * chunk) < times && chunk > floor) chunk /= 2;
  return chunk;
}

// NVLS and NVLSTree set the chunk once per threshold ("if (nBytes < k * ops * chunk) chunk = c").
inline double cut_below(double chunk, double size, double ops, double times, double to) {
  return size < times * ops * chunk && chunk > to ? to : chunk;
}

// One step of the Simple buffer: Tree, NVLS and CollNet move one chunk per step. NCCL_BUFFSIZE
// replaces the buffer (4 MiB by default).
inline double step_bytes(const Communicator& c) {
  const double buffer = c.env().buffsize > 0 ? c.env().buffsize : c.params().simple_buffer_bytes;
  return buffer / c.params().pipeline_steps;
}

// The data of one LL128 buffer step: NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS
// 640 x 8 bytes, of which 15 of every 16 words are data (the 16th is the line's flag).
inline constexpr double ll128_step_data_bytes() { return 120.0 * 640 * 8 / 16 * 15; }

// NVLS's chunk (NCCL_NVLS_CHUNKSIZE, 128 KiB by default) and NVLSTree's start: the NVLS chunk
// capped by NCCL_NVLSTREE_MAX_CHUNKSIZE, whose default is 64 KiB from 4 nodes up and no cap
// below (src/enqueue.cc, NCCL 2.21 to 2.30).
inline double nvls_chunk_bytes(const Communicator& c) {
  return c.env().nvls_chunksize > 0 ? c.env().nvls_chunksize : c.params().nvls_chunk_bytes;
}
inline double nvls_tree_start_chunk_bytes(const Communicator& c) {
  const double chunk = nvls_chunk_bytes(c);
  if (c.env().nvls_tree_max_chunksize > 0) return std::min(chunk, c.env().nvls_tree_max_chunksize);
  return c.nodes() >= 4 ? std::min(chunk, c.params().nvls_tree_max_chunk_bytes) : chunk;
}

// A Simple point-to-point transfer of `peer_bytes` to a peer on another node moves in chunks of
// NCCL_P2P_NET_CHUNKSIZE (128 KiB by default), a quarter of it below one chunk and half of it
// below eight ("Tune chunk size for the network": src/enqueue.cc's addP2pToPlan from 2.22,
// src/proxy.cc's ncclProxyComputeP2p in 2.18 to 2.21).
inline double p2p_net_chunk_bytes(const Communicator& c, double peer_bytes) {
  const double step = c.env().p2p_net_chunksize > 0 ? c.env().p2p_net_chunksize : c.params().p2p.net_chunk_bytes;
  return peer_bytes < step ? step / 4 : peer_bytes < 8 * step ? step / 2 : step;
}

// One NVLS head per NIC rail across nodes (each head GPU talks to the network for its share).
inline long heads(const Communicator& c) {
  return c.nodes() > 1 ? std::max<long>(1, std::min<long>(c.ranks_per_node(), c.nics_per_node())) : 1;
}

}  // namespace gf::comm::chunk_rules
