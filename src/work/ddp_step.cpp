#include "work/ddp_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "sim/engine.hpp"

namespace gf::work {

namespace {

// DDP's buckets over the layers in backward order: a bucket closes once it holds its cap
// (the first one a smaller cap, so communication starts early).
std::vector<std::pair<std::size_t, double>> make_buckets(const std::vector<LayerCost>& layers, const DdpOptions& o) {
  std::vector<std::pair<std::size_t, double>> out;  // (index in backward order of its last layer, bytes)
  double filled = 0;
  double cap = o.first_bucket_bytes > 0 ? o.first_bucket_bytes : o.bucket_bytes;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& layer = layers[layers.size() - 1 - i];
    filled += layer.gradient_bytes;
    if (filled >= cap) {
      out.push_back({i, filled});
      filled = 0;
      cap = o.bucket_bytes;
    }
  }
  if (filled > 0) out.push_back({layers.size() - 1, filled});
  return out;
}

// The parameters gathered back in buckets of the gradients' cap, in forward order (what the
// first layers need comes first): (index in forward order of the bucket's first layer, bytes).
// Each layer's share of `gather_bytes` follows its share of the gradients.
std::vector<std::pair<std::size_t, double>> gather_buckets(const std::vector<LayerCost>& layers, const DdpOptions& o) {
  std::vector<std::pair<std::size_t, double>> out;
  double total = 0;
  for (const auto& l : layers) total += l.gradient_bytes;
  if (o.gather_bytes <= 0 || total <= 0) return out;
  double filled = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (filled == 0) first = i;
    filled += layers[i].gradient_bytes / total * o.gather_bytes;
    if (filled >= o.bucket_bytes) {
      out.push_back({first, filled});
      filled = 0;
    }
  }
  if (filled > 0) out.push_back({first, filled});
  return out;
}

}  // namespace

DdpStep ddp_step(const comm::Communicator& dp, const std::vector<LayerCost>& layers, const DdpOptions& o) {
  return ddp_step(std::vector<const comm::Communicator*>{&dp}, layers, o);
}

DdpStep ddp_step(const std::vector<const comm::Communicator*>& groups, const std::vector<LayerCost>& layers,
                 const DdpOptions& o) {
  DdpStep out;
  const comm::Communicator& dp = *groups.front();
  sim::TaskGraph g;
  // The GPU's compute as one resource after the topology's links: kernels run one after
  // another on the compute stream (a chain), while NCCL's flows use the links.
  std::vector<double> capacity = dp.capacity();
  const sim::LinkId gpu = static_cast<sim::LinkId>(capacity.size());
  capacity.push_back(1.0);
  const std::vector<sim::LinkId> on_gpu{gpu};
  auto kernel = [&](double seconds, const std::string& label) {
    const std::vector<double> demand{seconds};
    const sim::TaskId t = g.add_work(on_gpu, demand, 1.0);
    g.set_label(t, label);
    return t;
  };
  std::optional<sim::TaskId> last;
  auto then = [&](sim::TaskId t) {
    if (last) g.add_dependency(*last, t);
    last = t;
  };
  double compute = o.optimizer_s;
  const long micro = std::max<long>(1, o.accumulation);
  // With --overlap-param-gather the all-gathers open the step (each group's on its own NCCL
  // stream, one after another) and the first micro-batch's forward waits for each bucket.
  std::vector<std::optional<sim::TaskId>> gathered(layers.size());
  std::vector<std::optional<sim::TaskId>> gather_stream(groups.size());
  if (o.overlap_param_gather) {
    for (const auto& [first, bytes] : gather_buckets(layers, o)) {
      for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        if (groups[gi]->ranks() < 2) continue;
        comm::CollectiveRequest req;
        req.op = comm::Op::all_gather;
        req.size = bytes;
        req.dtype = o.dtype;
        auto p = comm::add_collective(g, *groups[gi], req);
        if (gather_stream[gi]) g.add_dependency(*gather_stream[gi], p.entry);
        gather_stream[gi] = p.exit;
        if (gi == 0) {
          gathered[first] = p.exit;
          out.communication_s += p.alone.time.value();
        }
      }
    }
  }
  // For the last micro-batch: the compute task after which each layer's gradient is ready (in
  // backward order).
  std::vector<std::optional<sim::TaskId>> ready(layers.size());
  for (long m = 0; m < micro; ++m) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& l = layers[i];
      if (l.forward_s > 0 || (m == 0 && gathered[i])) {
        const sim::TaskId t = kernel(l.forward_s, "fwd " + l.name);
        if (m == 0 && gathered[i]) g.add_dependency(*gathered[i], t);
        then(t);
      }
      compute += l.forward_s;
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& l = layers[layers.size() - 1 - i];
      if (l.backward_s > 0) then(kernel(l.backward_s, "bwd " + l.name));
      compute += l.backward_s;
      ready[i] = last;
    }
  }
  const auto buckets = make_buckets(layers, o);
  // NCCL runs one collective at a time per communicator (its stream): each group's buckets
  // chain; the groups run side by side.
  std::vector<std::optional<sim::TaskId>> previous = gather_stream;
  std::vector<comm::PlacedCollective> placed;  // the first group's, for the report
  auto reduce = [&](comm::Op op, double bytes, std::optional<sim::TaskId> after) {
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      if (groups[gi]->ranks() < 2) continue;
      comm::CollectiveRequest req;
      req.op = op;
      req.size = bytes;  // nccl-tests' size: the whole buffer for reduce_scatter and all_gather
      req.dtype = o.dtype;
      auto p = comm::add_collective(g, *groups[gi], req);
      if (after) g.add_dependency(*after, p.entry);
      if (previous[gi]) g.add_dependency(*previous[gi], p.entry);
      previous[gi] = p.exit;
      if (gi == 0) {
        placed.push_back(p);
        out.communication_s += p.alone.time.value();
      }
    }
  };
  for (const auto& [index, bytes] : buckets)
    reduce(o.reduce_scatter ? comm::Op::reduce_scatter : comm::Op::all_reduce, bytes, ready[index]);
  const std::size_t reduced = placed.size();
  const sim::TaskId optimizer = kernel(o.optimizer_s, "optimizer");
  if (last) g.add_dependency(*last, optimizer);
  for (const auto& p : previous)
    if (p) g.add_dependency(*p, optimizer);
  std::fill(previous.begin(), previous.end(), std::optional<sim::TaskId>{});
  // The updated parameters gathered back (sharded optimizer), after the optimizer (unless the
  // next step's forward overlaps them, above).
  if (!o.overlap_param_gather)
    for (double left = o.gather_bytes; left > 0; left -= o.bucket_bytes)
      reduce(comm::Op::all_gather, std::min(left, o.bucket_bytes), optimizer);
  const auto r = sim::simulate(g, capacity);
  out.step_s = r.makespan.value();
  out.compute_s = compute;
  out.exposed_s = std::max(0.0, out.step_s - compute);
  for (std::size_t i = 0; i < reduced && i < buckets.size(); ++i) {
    out.buckets.push_back(
        {buckets[i].second, r.start[placed[i].entry], r.finish[placed[i].exit], placed[i].alone.time.value()});
  }
  return out;
}

double run_layers(const std::vector<LayerCost>& layers, long micro, double start, std::vector<double>& ready,
                  std::vector<StepEvent>* events, const std::vector<double>* params_ready) {
  double now = start;
  ready.assign(layers.size(), 0);
  auto span = [&](const LayerCost& l, double total, double inline_s, const char* pass, long mb) {
    if (events != nullptr) {
      const double compute = std::max(0.0, total - inline_s);
      if (compute > 0) events->push_back({kComputeTrack, fmt::format("{} {} (mb {})", pass, l.name, mb), now, compute});
      if (inline_s > 0)
        events->push_back({kInlineTrack, fmt::format("{} {} (mb {})", pass, l.name, mb), now + compute, inline_s});
    }
    now += total;
  };
  for (long mb = 0; mb < micro; ++mb) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (mb == 0 && params_ready != nullptr) now = std::max(now, (*params_ready)[i]);
      span(layers[i], layers[i].forward_s, layers[i].forward_inline_s, "fwd", mb);
    }
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const auto& l = layers[layers.size() - 1 - i];
      span(l, l.backward_s, l.backward_inline_s, "bwd", mb);
      ready[i] = now;
    }
  }
  return now;
}

DdpStep ddp_schedule(const std::vector<LayerCost>& layers, const DdpOptions& o, const CollectiveTime& priced) {
  // Buckets mostly share a few sizes, and a large model has thousands of them: remember the
  // answers for the sizes met rather than ask the (hashed, but not free) cache each time.
  struct Known {
    comm::Op op;
    double bytes;
    CollectiveTimes times;
  };
  std::vector<Known> known;
  auto time_of = [&](comm::Op op, double bytes) {
    for (const auto& k : known)
      if (k.op == op && k.bytes == bytes) return k.times;
    const CollectiveTimes t = priced(op, bytes);
    if (known.size() < 8) known.push_back({op, bytes, t});
    return t;
  };
  DdpStep out;
  const long micro = std::max<long>(1, o.accumulation);
  std::vector<double> ready;
  std::vector<StepEvent>* events = o.record ? &out.events : nullptr;
  // With --overlap-param-gather the all-gathers open the step on NCCL's stream, in forward
  // order; each layer's first forward waits for its bucket.
  double gather_stream = 0;
  std::vector<double> params_ready;
  std::vector<std::pair<double, double>> gathers;  // (start, end)
  if (o.overlap_param_gather) {
    params_ready.assign(layers.size(), 0);
    const auto buckets = gather_buckets(layers, o);
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      const CollectiveTimes t = time_of(comm::Op::all_gather, buckets[k].second);
      if (events != nullptr)
        events->push_back(
            {kGatherTrack, fmt::format("all-gather {:.1f} MiB", buckets[k].second / 1048576), gather_stream, t.shared});
      gathers.push_back({gather_stream, gather_stream + t.shared});
      gather_stream += t.shared;
      out.communication_s += t.alone;
      const std::size_t until = k + 1 < buckets.size() ? buckets[k + 1].first : layers.size();
      for (std::size_t i = buckets[k].first; i < until; ++i) params_ready[i] = gather_stream;
    }
  }
  const double compute_end =
      run_layers(layers, micro, 0, ready, events, o.overlap_param_gather ? &params_ready : nullptr);
  double pure = 0;
  for (const auto& l : layers) pure += l.forward_s + l.backward_s;
  out.compute_s = (o.overlap_param_gather ? pure * static_cast<double>(micro) : compute_end) + o.optimizer_s;
  const comm::Op reduce_op = o.reduce_scatter ? comm::Op::reduce_scatter : comm::Op::all_reduce;
  double stream = gather_stream;  // when NCCL's stream is free
  for (const auto& [index, bytes] : make_buckets(layers, o)) {
    const CollectiveTimes t = time_of(reduce_op, bytes);
    const double start = std::max(ready[index], stream);
    stream = start + t.shared;
    out.buckets.push_back({bytes, start, stream, t.alone});
    if (events != nullptr)
      events->push_back(
          {kGradientTrack,
           fmt::format("{} {:.1f} MiB", o.reduce_scatter ? "reduce-scatter" : "all-reduce", bytes / 1048576), start,
           t.shared});
    out.communication_s += t.alone;
  }
  // Compute that runs beside a reduction runs on the SMs NCCL leaves it: the backward pass ends
  // later by the SMs' share of the overlap (to first order: the reductions are not moved).
  double overlap = 0;
  for (const auto& b : out.buckets) overlap += std::max(0.0, std::min(b.end_s, compute_end) - b.start_s);
  for (const auto& [from, to] : gathers) overlap += std::max(0.0, std::min(to, compute_end) - from);
  const double slowed = o.sm_share * overlap;
  // The optimizer after the last gradient and the last reduction; the updated parameters
  // gathered back (sharded optimizer) after it, bucket by bucket. What the SMs cost the step is
  // what they add beyond the reductions' own end (nothing where the step waits for those).
  double end = std::max(compute_end + slowed, stream) + o.optimizer_s;
  out.sm_contention_s = std::max(compute_end + slowed, stream) - std::max(compute_end, stream);
  if (events != nullptr) events->push_back({kComputeTrack, "optimizer", end - o.optimizer_s, o.optimizer_s});
  for (double left = o.overlap_param_gather ? 0 : o.gather_bytes; left > 0; left -= o.bucket_bytes) {
    const double bytes = std::min(left, o.bucket_bytes);
    const CollectiveTimes t = time_of(comm::Op::all_gather, bytes);
    if (events != nullptr)
      events->push_back({kGatherTrack, fmt::format("all-gather {:.1f} MiB", bytes / 1048576), end, t.shared});
    end += t.shared;
    out.communication_s += t.alone;
  }
  out.step_s = end;
  out.exposed_s = std::max(0.0, out.step_s - out.compute_s - out.sm_contention_s);
  if (out.exposed_s < 1e-9 * out.step_s) out.exposed_s = 0;  // rounding, not waiting
  return out;
}

}  // namespace gf::work
