#pragma once
// Pipeline fill of NCCL's chunk-pipelined algorithms (Tree, NVLS, NVLSTree, CollNet) with the
// Simple protocol, and of Tree with LL128 across nodes (whose network hops store and forward
// whole chunks; see the .cpp).
//
// Why: these algorithms move each channel's data as a stream of chunks through a FIFO of
// NCCL_STEPS slots between stages (reduce up a tree, then broadcast down; reduce through the
// NVSwitch, then multicast back). A stage waits for a whole slot before it hands it on, so a
// channel reaches its steady rate only once its FIFO has filled: the first NCCL_STEPS chunks
// cost one chunk time each on top of the bandwidth term. NCCL picks smaller chunks for
// smaller messages (its own rules, reproduced here), which is why the published curves climb
// slowly between 16 MiB and 1 GiB. Rings need no fill (every rank starts sending its own
// chunk at once), and LL / LL128 hand on every 8- or 128-byte line with its own flag inside
// a node.
#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "core/units.hpp"

namespace gf::comm {

struct PipelineShape {
  double chunk_bytes = 0;  // NCCL's chunk size for this message
  long pipelines = 0;      // chunk streams running side by side: channels x heads
  long depth = 0;          // NCCL's tree / chain depth that its chunk rules use
};

// The chunk stream NCCL would run; pipelines = 0 where the algorithm and protocol have no fill.
PipelineShape pipeline_shape(const Communicator& c, Algo algo, Proto proto, double size);

// The fill time, given the data time the algorithm's traffic takes at its steady rate: each
// pipeline moves size / pipelines bytes in data_time, so one chunk takes
// data_time x chunk x pipelines / size, and the fill is min(NCCL_STEPS, chunks) of them (for
// trees and chains also at most 2 x depth - 1: the transfers one chunk makes after its first).
Seconds pipeline_fill(const Communicator& c, Algo algo, Proto proto, double size, Seconds data_time);

}  // namespace gf::comm
