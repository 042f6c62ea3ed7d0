#include "comm/stage_fill.hpp"

#include <algorithm>

namespace gf::comm {

Seconds stage_fill(const StagePath& path, double chunk, double chunks, double intra_rate, Seconds bottleneck_chunk) {
  if (chunk <= 0 || bottleneck_chunk.value() <= 0) return Seconds(0);
  const double bottleneck = bottleneck_chunk.value();
  // A crossing of the network at its share of the binding NIC: the bottleneck's chunk time holds
  // net_shared crossings, one after another on the same NIC direction. (Where a node's own link
  // binds instead, the network is faster than this: an upper bound.)
  const double crossing =
      path.net_stages > 0 ? bottleneck / static_cast<double>(std::max<long>(1, path.net_shared)) : 0;
  // A hop inside the node at a pipeline's share of its link (without a rate: the bottleneck's).
  const double hop = intra_rate > 0 ? chunk / intra_rate : bottleneck;
  const double trip = static_cast<double>(path.intra_stages) * hop + static_cast<double>(path.net_stages) * crossing;
  // What the data time already covers: where the network binds, the crossings that share the
  // busiest NIC direction while a pipeline holds one chunk (they run one after another, each
  // alone on its direction: a tree's up-streams, then its down-streams), down to one crossing
  // as the pipeline lengthens (only the last chunk's way down is left alone on the link at the
  // end); where the node's own link binds, its hops.
  if (path.net_stages <= 0) return Seconds(std::max(0.0, trip - bottleneck));
  const double covered = crossing + (bottleneck - crossing) / std::max(1.0, chunks);
  return Seconds(std::max(0.0, trip - covered));
}

}  // namespace gf::comm
