#include "work/train_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "comm/collective_tasks.hpp"
#include "work/pp_schedule.hpp"
#include "work/train_groups.hpp"

namespace gf::work {

namespace {

// One chunk's forward and backward on the representative stage, per micro-batch.
struct ChunkTimes {
  double forward_s = 0;
  double backward_s = 0;
};

// The schedule on the flow engine, every peer's send across every boundary as the
// communication layer's flows, sharing links with the others at that moment: what the sends add
// to the step beyond its compute and the bubble.
double p2p_on_flow_engine(TrainingContext& cache, const PipelineScheduleRequest& r, const PipelineShape& pipe,
                          const ChunkTimes& chunk, double bubble_s) {
  const ParallelLayout& l = r.layout;
  const auto boundaries = stage_boundaries(l, r.order, r.placement);
  const auto graph =
      build_pipeline(pipe, chunk.forward_s, chunk.backward_s, [&](sim::TaskGraph& g, long from, long to, bool) {
        // A send to the next stage runs over boundary `from`'s pairs, a gradient back over `to`'s.
        const bool back = to != (from + 1) % l.pp;
        const auto& pairs = boundaries[static_cast<std::size_t>(back ? to : from)];
        // The receivers' all-gather of the scattered activations follows the flows.
        PlacedTransfer placed{g.add_delay(Seconds(0)), g.add_delay(Seconds(r.send.gather_s))};
        for (const auto& pair : pairs) {
          comm::CollectiveRequest req;
          req.op = comm::Op::sendrecv;
          req.size = r.send.bytes;
          req.dtype = r.dtype;
          req.engine = comm::Engine::flow;
          const comm::Communicator& comm = cache.communicator(pair);
          const long sender_gpu = back ? pair[1] : pair[0];
          req.sender = comm.gpu_of(0) == sender_gpu ? 0 : 1;
          const auto c = comm::add_collective(g, comm, req);
          g.add_dependency(placed.entry, c.entry);
          g.add_dependency(c.exit, placed.exit);
        }
        return placed;
      });
  const auto run = run_pipeline(graph, cache.communicator(r.send.boundaries->slowest.front()).capacity(), false);
  return std::max(0.0, run.makespan_s - run.compute_s - bubble_s);
}

std::string schedule_assumption(const ParallelLayout& l, long chunks, const PipelineSend& send) {
  return fmt::format(
      "pipeline: Megatron's {} schedule with {}; one send of {:.3g} MB (1/TP of the activations) across the "
      "slowest stage boundary takes {:.3g} ms with its peers'{}",
      chunks > 1 ? "interleaved 1F1B" : "1F1B",
      l.overlap_p2p_comm ? "sends posted ahead (--overlap-p2p-comm)" : "blocking batched sends (no --overlap-p2p-comm)",
      send.bytes / 1e6, 1e3 * send.send_s, send.gather_s > 0 ? " and the TP all-gather after it" : "");
}

}  // namespace

PipelineSend price_pipeline_send(TrainingContext& cache, const PipelineSendRequest& r) {
  const ParallelLayout& l = r.layout;
  PipelineSend out;
  const double activations = r.tokens * static_cast<double>(r.hidden) * (r.precision == Precision::fp32 ? 4 : 2);
  out.bytes = activations / static_cast<double>(l.tp);
  const long per_node = cache.topology().gpus_per_node();
  const auto& pipe = cache.pipeline_pairs(l, r.order, r.placement,
                                          [&] { return pipeline_boundaries(l, r.order, r.placement, per_node); });
  // Every tensor-, context- and data-parallel peer sends its share across the boundary at the
  // same moment, over the NICs and switches they share.
  const auto& alone = cache.collective(pipe.slowest.front(), comm::Op::sendrecv, out.bytes, r.dtype);
  const double stretch = cache.contention(pipe.slowest, comm::Op::sendrecv, out.bytes, r.dtype);
  out.send_s = (alone.time + alone.data_time * (stretch - 1)).value();
  if (!l.sequence_parallel && r.tp_group != nullptr)
    out.gather_s = cache.collective(*r.tp_group, comm::Op::all_gather, activations, r.dtype).time.value();
  out.send_s += out.gather_s;
  out.boundaries = &pipe;
  return out;
}

PipelineSchedule pipeline_schedule(TrainingContext& cache, const PipelineScheduleRequest& r) {
  const ParallelLayout& l = r.layout;
  double forward_micro = 0;
  double backward_micro = 0;
  for (const auto& layer : r.layers) {
    forward_micro += layer.forward_s;
    backward_micro += layer.backward_s;
  }
  const long chunks = std::max<long>(1, l.vpp);
  PipelineShape pipe{l.pp, chunks, r.micro_batches, l.overlap_p2p_comm};
  pipe.dualpipe = r.dualpipe;
  const ChunkTimes chunk{forward_micro / static_cast<double>(chunks), backward_micro / static_cast<double>(chunks)};
  const PipelineCost cost = pipeline_closed_form(pipe, chunk.forward_s, chunk.backward_s, r.send.send_s);
  PipelineSchedule out;
  out.bubble_s = cost.bubble_s;
  out.p2p_s = cost.transfers_s;
  if (l.pp <= 1) return out;
  out.assumptions.push_back(schedule_assumption(l, chunks, r.send));
  if (r.full_graph && r.send.boundaries != nullptr) out.p2p_s = p2p_on_flow_engine(cache, r, pipe, chunk, out.bubble_s);
  if (r.record) {
    // Every stage's forwards, backwards and sends in the schedule's own order, each send at the
    // time the closed form gives it.
    const auto graph = build_pipeline(pipe, chunk.forward_s, chunk.backward_s, fixed_transfers(r.send.send_s));
    const std::vector<double> no_links;
    out.events = run_pipeline(graph, no_links, true).events;
  }
  return out;
}

}  // namespace gf::work
