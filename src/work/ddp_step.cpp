#include "work/ddp_step.hpp"

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

}  // namespace

DdpStep ddp_step(const comm::Communicator& dp, const std::vector<LayerCost>& layers, const DdpOptions& o) {
  DdpStep out;
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
  // For the last micro-batch: the compute task after which each layer's gradient is ready (in
  // backward order).
  std::vector<std::optional<sim::TaskId>> ready(layers.size());
  for (long m = 0; m < micro; ++m) {
    for (const auto& l : layers) {
      if (l.forward_s > 0) then(kernel(l.forward_s, "fwd " + l.name));
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
  std::optional<sim::TaskId> previous;  // NCCL runs one collective at a time on its stream
  std::vector<comm::PlacedCollective> placed;
  for (const auto& [index, bytes] : buckets) {
    comm::CollectiveRequest req;
    req.op = comm::Op::all_reduce;
    req.size = bytes;
    req.dtype = o.dtype;
    auto p = comm::add_collective(g, dp, req);
    if (ready[index]) g.add_dependency(*ready[index], p.entry);
    if (previous) g.add_dependency(*previous, p.entry);
    previous = p.exit;
    placed.push_back(p);
    out.communication_s += p.alone.time.value();
  }
  const sim::TaskId optimizer = kernel(o.optimizer_s, "optimizer");
  if (last) g.add_dependency(*last, optimizer);
  if (previous) g.add_dependency(*previous, optimizer);
  const auto r = sim::simulate(g, capacity);
  out.step_s = r.makespan.value();
  out.compute_s = compute;
  out.exposed_s = std::max(0.0, out.step_s - compute);
  for (std::size_t i = 0; i < placed.size(); ++i) {
    out.buckets.push_back(
        {buckets[i].second, r.start[placed[i].entry], r.finish[placed[i].exit], placed[i].alone.time.value()});
  }
  return out;
}

}  // namespace gf::work
