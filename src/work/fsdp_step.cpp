#include "work/fsdp_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace gf::work {

namespace {

// The all-gather stream: a gather starts when the one before it is done and the buffer it
// will replace is free (at most two gathered layers beyond the one computing).
struct GatherStream {
  double free = 0;
  double gather(double earliest, double seconds) {
    const double start = std::max(free, earliest);
    free = start + seconds;
    return free;
  }
};

}  // namespace

DdpStep fsdp_schedule(const std::vector<LayerCost>& layers, const FsdpOptions& o, const CollectiveTime& time_of) {
  DdpStep out;
  const std::size_t n = layers.size();
  std::vector<CollectiveTimes> gather(n), scatter(n), replicate(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double params = layers[i].gradient_bytes / 4;
    if (params <= 0) continue;
    gather[i] = time_of(comm::Op::all_gather, params * o.param_bytes);
    scatter[i] = time_of(comm::Op::reduce_scatter, params * o.grad_bytes);
    if (o.replicate) replicate[i] = time_of(comm::Op::all_reduce, params * o.grad_bytes * o.replica_fraction);
  }
  double compute = 0;  // when the compute stream is free
  GatherStream gathers;
  double reduce = 0;  // when the reduce-scatter stream is free
  const long micro = std::max<long>(1, o.accumulation);
  double overlap = 0;  // communication time, clipped to the compute's span below
  auto note = [&](const char* track, std::string name, double start, double duration) {
    if (o.record && duration > 0) out.events.push_back({track, std::move(name), start, duration});
  };
  auto gathered = [&](std::size_t i, double ready, long mb, const char* pass) {
    overlap += gather[i].shared;
    note(kGatherTrack, fmt::format("all-gather {} for {} (mb {})", layers[i].name, pass, mb), ready - gather[i].shared,
         gather[i].shared);
  };
  auto span = [&](const LayerCost& l, double total, double inline_s, const char* pass, long mb) {
    const double work = std::max(0.0, total - inline_s);
    note(kComputeTrack, fmt::format("{} {} (mb {})", pass, l.name, mb), compute, work);
    note(kInlineTrack, fmt::format("{} {} (mb {})", pass, l.name, mb), compute + work, inline_s);
    compute += total;
  };
  for (long mb = 0; mb < micro; ++mb) {
    // Forward: layer i waits for its parameters; its gather may start once layer i-2 is done.
    std::vector<double> done(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const double buffer_free = i >= 2 ? done[i - 2] : 0;
      const double ready = gathers.gather(buffer_free, gather[i].shared);
      gathered(i, ready, mb, "fwd");
      compute = std::max(compute, ready);
      span(layers[i], layers[i].forward_s, layers[i].forward_inline_s, "fwd", mb);
      done[i] = compute;
      out.compute_s += layers[i].forward_s;
      out.communication_s += gather[i].alone;
    }
    // Backward, last layer first: gathered again (the forward resharded), gradients reduced.
    std::vector<double> back(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = n - 1 - k;
      const double buffer_free = k >= 2 ? back[k - 2] : 0;
      const double ready = gathers.gather(buffer_free, gather[i].shared);
      gathered(i, ready, mb, "bwd");
      compute = std::max(compute, ready);
      span(layers[i], layers[i].backward_s, layers[i].backward_inline_s, "bwd", mb);
      back[k] = compute;
      out.compute_s += layers[i].backward_s;
      out.communication_s += gather[i].alone;
      reduce = std::max(reduce, compute);
      note(kGradientTrack, "reduce-scatter " + layers[i].name, reduce, scatter[i].shared);
      overlap += scatter[i].shared;
      reduce += scatter[i].shared;
      out.communication_s += scatter[i].alone;
      if (o.replicate && mb == micro - 1) {
        note(kGradientTrack, "all-reduce across replicas " + layers[i].name, reduce, replicate[i].shared);
        reduce += replicate[i].shared;
        out.communication_s += replicate[i].alone;
      }
    }
  }
  // Gathers and reduce-scatters run beside the compute nearly all the time: it loses the SMs'
  // share of the communication that falls before the compute's end (to first order).
  out.sm_contention_s = o.sm_share * std::min(compute, overlap);
  compute += out.sm_contention_s;
  out.compute_s += o.optimizer_s;
  out.step_s = std::max(compute, reduce) + o.optimizer_s;
  note(kComputeTrack, "optimizer", out.step_s - o.optimizer_s, o.optimizer_s);
  out.exposed_s = std::max(0.0, out.step_s - out.compute_s - out.sm_contention_s);
  if (out.exposed_s < 1e-9 * out.step_s) out.exposed_s = 0;  // rounding, not waiting
  return out;
}

}  // namespace gf::work
