#include "work/pp_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "sim/engine.hpp"

namespace gf::work {

namespace {

// Megatron-Core's schedule table for the interleaved schedule: the micro-batches in groups of
// `stages` (microbatch_group_size_per_vp_stage's default), each group through every chunk in
// turn; the last group may be short. Virtual micro-batch k is entry k.
std::vector<std::pair<long, long>> schedule_table(const PipelineShape& s) {
  std::vector<std::pair<long, long>> table;  // (micro-batch, chunk)
  table.reserve(static_cast<std::size_t>(s.micro_batches * s.chunks));
  for (long first = 0; first < s.micro_batches; first += s.stages) {
    const long last = std::min(first + s.stages, s.micro_batches);
    for (long c = 0; c < s.chunks; ++c)
      for (long mb = first; mb < last; ++mb) table.emplace_back(mb, c);
  }
  return table;
}

}  // namespace

long warmup_forwards(const PipelineShape& s, long stage) {
  if (s.stages < 1 || s.chunks < 1 || s.micro_batches < 1 || stage < 0 || stage >= s.stages)
    throw std::invalid_argument("pipeline schedule: a pipeline needs at least one stage, chunk and micro-batch");
  const long p = s.stages;
  const long total = s.micro_batches * s.chunks;
  if (s.chunks == 1) return std::min(p - stage - 1, s.micro_batches);
  if (s.micro_batches == p) return total;  // all_warmup_microbatches
  return std::min((p - stage - 1) * 2 + (s.chunks - 1) * p, total);
}

std::vector<PipelineOp> stage_order(const PipelineShape& s, long stage) {
  if (s.chunks > 1 && s.micro_batches % s.stages != 0)
    throw std::invalid_argument("pipeline schedule: the interleaved schedule needs micro-batches divisible by stages");
  const long warm = warmup_forwards(s, stage);
  const long v = s.chunks;
  const long total = s.micro_batches * v;
  const auto table = schedule_table(s);
  auto forward = [&](long k) {
    return PipelineOp{true, table[static_cast<std::size_t>(k)].first, table[static_cast<std::size_t>(k)].second};
  };
  auto backward = [&](long k) {
    const auto& [mb, c] = table[static_cast<std::size_t>(k)];
    return PipelineOp{false, mb, v - 1 - c};
  };
  std::vector<PipelineOp> ops;
  ops.reserve(static_cast<std::size_t>(2 * total));
  for (long k = 0; k < warm; ++k) ops.push_back(forward(k));
  for (long k = 0; k < total - warm; ++k) {
    ops.push_back(forward(warm + k));
    ops.push_back(backward(k));
  }
  for (long k = total - warm; k < total; ++k) ops.push_back(backward(k));
  return ops;
}

AddTransfer fixed_transfers(double seconds) {
  return [seconds](sim::TaskGraph& g, long, long, bool) {
    const auto id = g.add_delay(Seconds(seconds));
    return PlacedTransfer{id, id};
  };
}

PipelineGraph build_pipeline(const PipelineShape& shape, double forward_s, double backward_s, const AddTransfer& add) {
  PipelineGraph g;
  g.shape = shape;
  const long p = shape.stages;
  const long v = shape.chunks;
  const long m = shape.micro_batches;
  // Where each op sits in its stage's order: [stage][forward][chunk][micro-batch].
  auto slot = [&](long stage, bool fwd, long chunk, long mb) {
    return static_cast<std::size_t>(((stage * 2 + (fwd ? 1 : 0)) * v + chunk) * m + mb);
  };
  std::vector<long> position(static_cast<std::size_t>(p * 2 * v * m), -1);
  g.order.resize(static_cast<std::size_t>(p));
  g.compute.resize(static_cast<std::size_t>(p));
  for (long s = 0; s < p; ++s) {
    auto& order = g.order[static_cast<std::size_t>(s)];
    order = stage_order(shape, s);
    auto& tasks = g.compute[static_cast<std::size_t>(s)];
    tasks.reserve(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& op = order[k];
      position[slot(s, op.forward, op.chunk, op.micro_batch)] = static_cast<long>(k);
      const sim::TaskId id = g.graph.add_delay(Seconds(op.forward ? forward_s : backward_s));
      tasks.push_back(id);
      if (k > 0) g.graph.add_dependency(tasks[k - 1], id);  // one stream runs them in order
    }
  }
  // The calls: Megatron exchanges tensors in calls between ops, each a batch of sends and
  // receives the stage waits on before its next op. Slot j is the call before op j (after op
  // j - 1). A receive is posted in the call just before the op that needs it, except the
  // interleaved schedule's steady state, whose one call after each forward-backward pair also
  // receives the next backward's gradient; a send goes in the call after the op that produced
  // it, except that the interleaved steady state sends a forward's output after the pair's
  // backward. (The 1F1B warm-up's separate send and receive calls are taken as one.)
  const bool interleaved = v > 1;
  // Whether the stage has a steady state (a forward and a backward in turn) at all.
  auto steady = [&](long stage) { return warmup_forwards(shape, stage) < m * v; };
  auto is_backward_at = [&](long stage, long k) {
    const auto& order = g.order[static_cast<std::size_t>(stage)];
    return k >= 0 && k < static_cast<long>(order.size()) && !order[static_cast<std::size_t>(k)].forward;
  };
  auto receive_slot = [&](long stage, long k, bool forward) {
    const bool paired = interleaved && steady(stage) && !forward && k > 0 && !is_backward_at(stage, k - 1);
    return paired ? k - 1 : k;
  };
  auto send_slot = [&](long stage, long k, bool forward) {
    return interleaved && steady(stage) && forward && is_backward_at(stage, k + 1) ? k + 2 : k + 1;
  };
  auto op_at = [&](long stage, long k) -> std::optional<sim::TaskId> {
    const auto& tasks = g.compute[static_cast<std::size_t>(stage)];
    if (k < 0 || k >= static_cast<long>(tasks.size())) return std::nullopt;
    return tasks[static_cast<std::size_t>(k)];
  };
  for (long s = 0; s < p; ++s) {
    const auto& order = g.order[static_cast<std::size_t>(s)];
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& op = order[k];
      const long vs = op.chunk * p + s;  // the virtual stage: chunk c of stage s holds layers of vs
      long from_vs = -1;
      if (op.forward && vs > 0) from_vs = vs - 1;
      if (!op.forward && vs < p * v - 1) from_vs = vs + 1;
      const sim::TaskId consumer = g.compute[static_cast<std::size_t>(s)][k];
      if (!op.forward) {
        // A backward follows its own forward (the order has it before; say so in the graph).
        const long f = position[slot(s, true, op.chunk, op.micro_batch)];
        g.graph.add_dependency(g.compute[static_cast<std::size_t>(s)][static_cast<std::size_t>(f)], consumer);
      }
      if (from_vs < 0) continue;
      const long ps = from_vs % p;
      const long pc = from_vs / p;
      const long pk = position[slot(ps, op.forward, pc, op.micro_batch)];
      if (pk < 0) throw std::logic_error("pipeline schedule: an op without its producer");
      const sim::TaskId producer = g.compute[static_cast<std::size_t>(ps)][static_cast<std::size_t>(pk)];
      if (ps == s) {  // one stage holding both virtual stages: no transfer
        g.graph.add_dependency(producer, consumer);
        continue;
      }
      const PlacedTransfer t = add(g.graph, ps, s, op.forward);
      g.transfers.push_back({t, ps, s, op.forward});
      g.graph.add_dependency(producer, t.entry);
      g.graph.add_dependency(t.exit, consumer);
      if (shape.overlap) continue;  // posted ahead, waited for by the consumer alone
      const long sent = send_slot(ps, pk, op.forward);
      const long received = receive_slot(s, static_cast<long>(k), op.forward);
      // It starts when both sides have reached their calls...
      if (auto before = op_at(ps, sent - 1)) g.graph.add_dependency(*before, t.entry);
      if (auto before = op_at(s, received - 1)) g.graph.add_dependency(*before, t.entry);
      // ...and both wait for it before their next op.
      if (auto after = op_at(ps, sent)) g.graph.add_dependency(t.exit, *after);
      if (auto after = op_at(s, received)) g.graph.add_dependency(t.exit, *after);
    }
  }
  return g;
}

PipelineTiming run_pipeline(const PipelineGraph& g, std::span<const double> capacity, bool record) {
  const auto r = sim::simulate(g.graph, capacity);
  PipelineTiming out;
  out.makespan_s = r.makespan.value();
  for (const auto id : g.compute.front()) out.compute_s += g.graph.duration(id);
  if (!record) return out;
  for (std::size_t s = 0; s < g.compute.size(); ++s) {
    const std::string track = fmt::format("pipeline stage {}", s);
    for (std::size_t k = 0; k < g.compute[s].size(); ++k) {
      const auto& op = g.order[s][k];
      const auto id = g.compute[s][k];
      const std::string chunk = g.shape.chunks > 1 ? fmt::format(" chunk {}", op.chunk) : std::string();
      out.events.push_back({track,
                            fmt::format("{} mb {}{}", op.forward ? "forward" : "backward", op.micro_batch, chunk),
                            r.start[id], r.finish[id] - r.start[id]});
    }
  }
  for (const auto& t : g.transfers) {
    // One track per stage boundary, both directions (the last stage hands chunks back to the first).
    const long sender = t.forward ? t.from : t.to;
    out.events.push_back({fmt::format("stage {} -> {} sends", sender, (sender + 1) % g.shape.stages),
                          t.forward ? "activations" : "gradients", r.start[t.placed.entry],
                          r.finish[t.placed.exit] - r.start[t.placed.entry]});
  }
  return out;
}

PipelineCost pipeline_closed_form(const PipelineShape& shape, double forward_s, double backward_s, double transfer_s) {
  PipelineCost c;
  if (shape.stages <= 1) return c;
  const double p = static_cast<double>(shape.stages);
  const double v = static_cast<double>(shape.chunks);
  const double m = static_cast<double>(shape.micro_batches);
  if (shape.dualpipe) {
    // (PP/2 - 1) x (F&B + B - 3W) with F&B = F + B and W = B / 2; the sends hide under the merged
    // chunks ("both all-to-all and PP communication can be fully hidden").
    c.bubble_s = std::max(0.0, p / 2 - 1) * (forward_s + backward_s / 2);
    return c;
  }
  c.bubble_s = (p - 1) * (forward_s + backward_s);
  // The transfers on the critical path of the graph above: with uniform stages and fixed
  // transfer times this count is exact (the graph is a longest-path problem whose path does not
  // change with the times; test PipelineSchedule.ClosedFormIsTheGraphsCriticalPath checks it
  // over stages, chunks, micro-batches, backward/forward ratios and transfer times).
  double on_path = 0;
  if (shape.overlap && shape.chunks > 1) {
    if (transfer_s > forward_s) {
      // Sends slower than a chunk's forward throttle the steady state; no count holds for every
      // shape there, so the schedule itself is timed (with the sends as fixed times).
      const std::vector<double> no_links;
      const auto g = build_pipeline(shape, forward_s, backward_s, fixed_transfers(transfer_s));
      const auto t = run_pipeline(g, no_links, false);
      c.transfers_s = std::max(0.0, t.makespan_s - t.compute_s - c.bubble_s);
      return c;
    }
    // Posted ahead, the sends hide under the compute; only the chain of the first micro-batch
    // through every virtual stage and back waits for them.
    on_path = 2 * v * p - 2;
  } else if (shape.chunks == 1) {
    // Two calls per micro-batch (after its forward, after its backward) and the fill's; with two
    // stages the stages take turns and one call per micro-batch shows.
    on_path = shape.stages == 2 ? m + 1 : 2 * m + 2 * p - 5;
  } else if (shape.micro_batches == shape.stages) {
    on_path = 2 * (v + 1) * p - 4;  // every forward first: the warm-up's calls and the drain's
  } else {
    // One batched call per forward-backward pair, and the warm-up's.
    on_path = v * m + (v + 1) * (p - 1) + (v - 2);
  }
  c.transfers_s = on_path * transfer_s;
  return c;
}

}  // namespace gf::work
