#pragma once
// Pipeline fill of NCCL's chunk-pipelined algorithms (Tree, NVLS, NVLSTree, CollNet) with the
// Simple protocol, of Tree with LL128 across nodes (whose network hops store and forward
// whole chunks; see the .cpp), and of Simple point-to-point transfers across nodes (the copies
// into and out of the network buffer: own_rate_fill_s, src/comm/p2p_channels).
//
// Why: these algorithms move each channel's data as a stream of chunks through a FIFO of
// NCCL_STEPS slots between stages (reduce up a tree, then broadcast down; reduce through the
// NVSwitch, then multicast back). A stage waits for a whole slot before it hands it on, so a
// channel reaches its steady rate only once its FIFO has filled: the first NCCL_STEPS chunks
// cost one chunk time each on top of the bandwidth term. NCCL picks smaller chunks for
// smaller messages (its own rules, reproduced here), which is why the published curves climb
// slowly between 16 MiB and 1 GiB. Rings need no fill (every rank starts sending its own
// chunk at once), and LL / LL128 hand on every 8- or 128-byte line with its own flag inside
// a node; but a ring with LL128 across nodes waits at each network hop for a whole step (see
// ring.cpp), a delay in series on its critical path rather than a FIFO to fill.
#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "comm/stage_fill.hpp"
#include "core/units.hpp"

namespace gf::comm {

struct PipelineShape {
  double chunk_bytes = 0;  // NCCL's chunk size for this message
  long pipelines = 0;      // chunk streams running side by side: channels x heads
  long depth = 0;          // NCCL's tree / chain depth that its chunk rules use
  // Store-and-forward stages in series on one chunk's path (NVLS reduce, each network crossing
  // up and down a tree of nodes, NVLS multicast): a chunk is handed on only once it is whole,
  // so the first one reaches the end after every stage, and the data time covers one of them.
  // 0: bounded by the FIFO and the depth instead (see pipeline_fill).
  long stages = 0;
  // Store-and-forward stages in series on the critical path, which no FIFO bounds (0: the
  // FIFO / depth rule below). With it, `stream_chunks` is how many chunk times the steady data
  // time spans per pipeline (a ring's steps), instead of size / pipelines / chunk_bytes.
  long serial_stages = 0;
  double stream_chunks = 0;
  // A fill that does not scale with the bottleneck's chunk time: stages at their own rate
  // before and after it (point-to-point across nodes: the copies into and out of the network
  // buffer). When set, it is the fill.
  double own_rate_fill_s = 0;
  // Where set (any stage counted), the fill is the first chunk's trip through these stages at
  // their own rates (comm/stage_fill.hpp): a hop inside a node at a pipeline's share of the
  // node's link (every pipeline runs through every GPU), a network crossing at the network's.
  StagePath path;
};

// The chunk stream NCCL would run; pipelines = 0 where the algorithm and protocol have no fill.
PipelineShape pipeline_shape(const Communicator& c, Op op, Algo algo, Proto proto, double size);

// The fill time, given the data time the algorithm's traffic takes at its steady rate: each
// pipeline moves size / pipelines bytes in data_time, so one chunk takes
// data_time x chunk x pipelines / size, and the fill is min(NCCL_STEPS, chunks) of them (for
// trees and chains also at most 2 x depth - 1: the transfers one chunk makes after its first;
// where the shape counts its stages, at most stages - 1: the stages after the first), or
// serial_stages of them where the shape gives those. Where the shape gives a stage path (Tree
// and NVLSTree with Simple) the fill is the first chunk's trip through it at each stage's own
// rate instead (comm/stage_fill.hpp). Once a pipeline holds a whole chunk the fill stops
// growing with the size: the chunk is NCCL's (bounded), not the message.
Seconds pipeline_fill(const Communicator& c, Op op, Algo algo, Proto proto, double size, Seconds data_time);

}  // namespace gf::comm
