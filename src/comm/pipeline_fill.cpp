#include "comm/pipeline_fill.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "comm/algorithm.hpp"
#include "comm/nccl_params.hpp"

namespace gf::comm {

namespace {

// A pipeline's share of what a GPU can send to the other GPUs of its node, bytes/s: every
// pipeline runs through every GPU. The GPU's links to its peers are the first links of its
// routes to them (one NVLink port on an NVSwitch node, several direct NVLinks on a mesh, where
// NCCL's channels take different cycles), each at the slowest link of its route. 0 where a node
// holds one rank.
double intra_pipeline_rate(const Communicator& c, long pipelines) {
  if (c.ranks_per_node() < 2 || pipelines <= 0) return 0;
  std::map<topo::LinkId, double> first_links;
  for (long peer = 1; peer < c.ranks_per_node(); ++peer) {
    const topo::Route r = c.route(0, peer);
    if (r.links.empty()) continue;
    double slowest = c.link_capacity(r.links.front());
    for (const auto l : r.links) slowest = std::min(slowest, c.link_capacity(l));
    auto [it, fresh] = first_links.try_emplace(r.links.front(), slowest);
    if (!fresh) it->second = std::min(it->second, slowest);
  }
  double total = 0;
  for (const auto& [link, rate] : first_links) total += rate;
  return total / static_cast<double>(pipelines);
}

}  // namespace

PipelineShape pipeline_shape(const Communicator& c, Op op, Algo algo, Proto proto, double size) {
  if (c.ranks() < 2 || size <= 0) return {};
  return algorithm(algo).pipeline_shape(c, op, proto, size);
}

Seconds pipeline_fill(const Communicator& c, Op op, Algo algo, Proto proto, double size, Seconds data_time) {
  const PipelineShape s = pipeline_shape(c, op, algo, proto, size);
  if (s.own_rate_fill_s > 0) return Seconds(s.own_rate_fill_s);
  if (s.pipelines <= 0 || s.chunk_bytes <= 0 || data_time.value() <= 0) return Seconds(0);
  if (s.path.intra_stages + s.path.net_stages > 0) {
    const double per_pipeline = size / static_cast<double>(s.pipelines);
    const double chunk = std::min(s.chunk_bytes, per_pipeline);  // a pipeline holding less hands on less
    return stage_fill(s.path, chunk, per_pipeline / chunk, intra_pipeline_rate(c, s.pipelines),
                      Seconds(data_time.value() * chunk / per_pipeline));
  }
  if (s.serial_stages > 0 && s.stream_chunks > 0)
    return Seconds(std::min(static_cast<double>(s.serial_stages), s.stream_chunks) * data_time.value() /
                   s.stream_chunks);
  const double per_pipeline = size / static_cast<double>(s.pipelines);
  const double chunks = std::ceil(per_pipeline / s.chunk_bytes);
  const double chunk_time = data_time.value() / chunks;
  // A tree or chain cannot hold more chunks in flight than the transfers a chunk makes in
  // series after its first (up `depth` hops and down again); the FIFO depth bounds the rest.
  double in_flight = static_cast<double>(c.params().pipeline_steps);
  if (algorithm(algo).traits().fill_bounded_by_depth)
    in_flight = std::min(in_flight, 2.0 * static_cast<double>(std::max<long>(1, s.depth)) - 1.0);
  // The first chunk comes through after every stage of its path; the data time covers one, each
  // further one adds a chunk time. (The FIFO's NCCL_STEPS slots bound how many chunks a stage
  // may run ahead, which sets the steady rate, not how long the first chunk takes to come
  // through: counting all of them made the fill 8 chunk times whatever the path, so on 10 GbE
  // it equalled the data time up to 128 MiB.)
  if (s.stages > 0) in_flight = std::min(in_flight, static_cast<double>(std::max<long>(1, s.stages - 1)));
  return Seconds(std::min(in_flight, chunks) * chunk_time);
}

}  // namespace gf::comm
