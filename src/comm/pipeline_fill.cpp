#include "comm/pipeline_fill.hpp"

#include <algorithm>
#include <cmath>

#include "comm/nccl_params.hpp"
#include "comm/pattern.hpp"

namespace gf::comm {

namespace {

long ceil_log2(long n) { return n <= 1 ? 0 : static_cast<long>(std::ceil(std::log2(static_cast<double>(n)))); }

// Halve `chunk` while each pipeline would get fewer than `times` chunks, down to `floor`
// (NCCL's "while (nBytes / (nChannels*chunkSize) < depth*k && chunkSize > floor) chunkSize /= 2").
double halve_while(double chunk, double size, double pipelines, double times, double floor) {
  while (size / (pipelines * chunk) < times && chunk > floor) chunk /= 2;
  return chunk;
}

// NVLS and NVLSTree set the chunk once per threshold ("if (nBytes < k * ops * chunk) chunk = c").
double cut_below(double chunk, double size, double ops, double times, double to) {
  return size < times * ops * chunk && chunk > to ? to : chunk;
}

// Tree/LL128 across nodes. Inside a node LL128 hands on every 128-byte line with its own flag,
// but NCCL's network proxy sends a step only when all of its lines are written (src/transport/
// net.cc, sendProxyProgress checks every line's flag of an LL128 step before posting it), so
// each network hop of the tree stores and forwards whole chunks: the GPU fills the chunk, then
// the NIC moves it. Up and down the tree that is 2 x 2 x log2(nodes) chunk stages in series.
// The chunk is NCCL's (calcCollChunking, NCCL 2.7 to 2.30): an LL128 buffer step
// (NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x 8 bytes) of which 15 of
// every 16 words are data, halved while each channel would get fewer than
// nsteps x 64 / ppn chunks (down to 128 KiB) and nsteps x 16 / ppn (down to 32 KiB), with
// nsteps = 1 + log2(nodes) + ppn / 10.
PipelineShape tree_ll128_across_nodes(const Communicator& c, double size) {
  PipelineShape s;
  constexpr double kStepBytes = 120.0 * 640 * 8;
  double chunk = kStepBytes / 16 * 15;
  const double ppn = static_cast<double>(c.ranks_per_node());
  const double nsteps = 1 + std::floor(std::log2(static_cast<double>(c.nodes()))) + 0.1 * ppn;
  s.pipelines = channels(c, Algo::tree);
  const double p = static_cast<double>(s.pipelines);
  // NCCL divides integers here: whole chunks per channel.
  while (std::floor(size / (p * chunk)) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (std::floor(size / (p * chunk)) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
  s.chunk_bytes = chunk;
  s.depth = 2 * ceil_log2(c.nodes());
  return s;
}

}  // namespace

PipelineShape pipeline_shape(const Communicator& c, Algo algo, Proto proto, double size) {
  PipelineShape s;
  if (c.ranks() < 2 || size <= 0) return s;
  if (proto == Proto::ll128 && algo == Algo::tree && c.nodes() > 1) return tree_ll128_across_nodes(c, size);
  if (proto != Proto::simple) return s;
  const auto& n = c.params();
  // NCCL_BUFFSIZE replaces the Simple buffer (4 MiB by default).
  const double buffer = c.env().buffsize > 0 ? c.env().buffsize : n.simple_buffer_bytes;
  const double step = buffer / n.pipeline_steps;  // Tree, NVLS, CollNet: one step per chunk
  const long ppn = c.ranks_per_node();
  // One NVLS head per NIC rail across nodes (each head GPU talks to the network for its share).
  const long heads = c.nodes() > 1 ? std::max<long>(1, std::min<long>(ppn, c.nics_per_node())) : 1;
  switch (algo) {
    case Algo::tree: {
      // An intra-node chain of the node's ranks, then a binary tree over the nodes.
      // NCCL 2.20 and later run Tree/Simple in whole steps at every size (src/enqueue.cc,
      // calcCollChunking: only CollNet, Tree/LL128 and PAT shrink the chunk; 2.19 and before
      // halved it for smaller messages, down to 32 KiB).
      s.depth = (ppn - 1) + ceil_log2(c.nodes());
      s.pipelines = channels(c, Algo::tree);
      s.chunk_bytes = step;
      return s;
    }
    case Algo::nvls: {
      s.depth = 1;
      s.pipelines = channels(c, algo) * heads;
      const double ops = static_cast<double>(s.pipelines);
      double chunk = std::min(step, 131072.0);
      chunk = cut_below(chunk, size, ops, 64, 65536);
      chunk = cut_below(chunk, size, ops, 8, 32768);
      s.chunk_bytes = cut_below(chunk, size, ops, 2, 16384);
      return s;
    }
    case Algo::nvls_tree: {
      s.depth = 1 + ceil_log2(c.nodes());
      s.pipelines = channels(c, algo) * heads;
      const double ops = static_cast<double>(s.pipelines);
      double chunk = cut_below(step, size, ops, 32, 262144);
      chunk = cut_below(chunk, size, ops, 16, 131072);
      chunk = cut_below(chunk, size, ops, 4, 65536);
      s.chunk_bytes = cut_below(chunk, size, ops, 1, 32768);
      return s;
    }
    case Algo::collnet_direct: {
      s.depth = 1;
      s.pipelines = channels(c, algo) * heads;
      const double p = static_cast<double>(s.pipelines);
      double chunk = cut_below(step, size, p, 16, 131072);
      chunk = cut_below(chunk, size, p, 4, 65536);
      s.chunk_bytes = cut_below(chunk, size, p, 1, 32768);
      return s;
    }
    case Algo::collnet_chain: {
      s.depth = ppn;
      s.pipelines = channels(c, algo);
      const double p = static_cast<double>(s.pipelines);
      const double d = static_cast<double>(s.depth);
      double chunk = halve_while(std::min(step, 262144.0), size, p, d * 64, 131072);
      chunk = halve_while(chunk, size, p, d * 8, 65536);
      s.chunk_bytes = halve_while(chunk, size, p, d, 32768);
      return s;
    }
    default: return s;  // rings, PAT, point-to-point: no fill (see the header)
  }
}

Seconds pipeline_fill(const Communicator& c, Algo algo, Proto proto, double size, Seconds data_time) {
  const PipelineShape s = pipeline_shape(c, algo, proto, size);
  if (s.pipelines <= 0 || s.chunk_bytes <= 0 || data_time.value() <= 0) return Seconds(0);
  const double per_pipeline = size / static_cast<double>(s.pipelines);
  const double chunks = std::ceil(per_pipeline / s.chunk_bytes);
  const double chunk_time = data_time.value() / chunks;
  // A tree or chain cannot hold more chunks in flight than the transfers a chunk makes in
  // series after its first (up `depth` hops and down again); the FIFO depth bounds the rest.
  double in_flight = static_cast<double>(c.params().pipeline_steps);
  if (algo == Algo::tree || algo == Algo::collnet_chain)
    in_flight = std::min(in_flight, 2.0 * static_cast<double>(std::max<long>(1, s.depth)) - 1.0);
  return Seconds(std::min(in_flight, chunks) * chunk_time);
}

}  // namespace gf::comm
