#pragma once
// The pipeline start of a chunk stream whose stages run at different rates: the first chunk's
// trip through the store-and-forward stages of its path, each at its own rate, less the one
// chunk of the bottleneck that the data time already covers.
//
// Why: a chunk-pipelined algorithm (NCCL's Tree and NVLSTree with Simple) takes
//   T = sum over stages of one chunk's stage time + (chunks - 1) x the bottleneck's chunk time
// (the store-and-forward pipeline), so its fill beyond the data time (chunks x the bottleneck's
// chunk time) is the other stages' chunk times. Counting every stage at the bottleneck's rate
// made the fill grow with the slowest link: on 10 GbE each NVLink hop of a node's chain cost a
// 10 GbE chunk time, so the fill equalled the data time up to 64 MiB and every message cost
// twice its transfer. Here a hop inside a node costs a chunk at a channel's share of the node's
// link, and a network crossing a chunk at the network's share; a tree's up and down crossings
// share each NIC direction (NCCL's double binary tree: a node is interior in one tree and a
// leaf in the other), so the data time already serialises `net_shared` of them.
#include "core/units.hpp"

namespace gf::comm {

struct StagePath {
  long intra_stages = 0;  // store-and-forward hops inside nodes on one chunk's path
  long net_stages = 0;    // network crossings on one chunk's path
  long net_shared = 1;    // of those, how many share one NIC direction (and so the data time)
};

// chunk: the bytes a stage hands on at once (NCCL's chunk, or less where a pipeline holds less);
// chunks: how many of them a pipeline holds (at least 1);
// intra_rate: a pipeline's share of a node's link, bytes/s; bottleneck_chunk: the data time's
// share of one chunk (data time x chunk / bytes per pipeline). Never negative; zero without a
// chunk. The result stops growing once the chunk is NCCL's: a bounded start, not a copy of the data.
Seconds stage_fill(const StagePath& path, double chunk, double chunks, double intra_rate, Seconds bottleneck_chunk);

}  // namespace gf::comm
