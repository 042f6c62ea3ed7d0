#include "work/serving_fleet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace gf::work {

ReplicaSet::ReplicaSet(TrainingContext& context, const ModelSpec& m, const ReplicaSpec& r, long units,
                       DisaggregatedSpec disaggregated, double typical_prompt, const BackgroundJob* background) {
  const long g = r.gpus();
  const long cluster = context.topology().gpu_count();
  const long instances = units * disaggregated.instances();
  if (g > cluster)
    throw InputError(
        {}, "--tp", fmt::format("a replica of TP {} x PP {} needs {} GPUs; the cluster has {}", r.tp, r.pp, g, cluster),
        "TP x PP at most the cluster's GPU count (more nodes with --nodes)");
  if (disaggregated.on() && r.pp > 1)
    throw InputError({}, "--disaggregate", "pipeline-parallel instances", "--pp 1 with --disaggregate");
  const long distinct = std::max<long>(1, std::min(instances, cluster / g));
  for (long i = 0; i < distinct; ++i) {
    std::vector<long> gpus;
    for (long k = 0; k < g; ++k) gpus.push_back(i * g + k);
    costs_.push_back(std::make_unique<InferenceCost>(context, m, r, std::move(gpus)));
  }
  for (long j = 0; j < instances; ++j) view_.push_back(costs_[static_cast<std::size_t>(j % distinct)].get());
  if (disaggregated.on()) {
    prefill_ = units * disaggregated.prefill;
    // The KV cache goes to the first decode instance on other GPUs than the first prefill one
    // (a fleet larger than the cluster wraps onto the same GPUs; the nodes are alike).
    if (distinct < 2)
      throw InputError({}, "--disaggregate",
                       fmt::format("the cluster's {} GPUs hold one instance of {} GPUs: prefill and decode cannot sit "
                                   "apart",
                                   cluster, g),
                       "more nodes (--nodes) or a smaller TP");
    const InferenceCost* to = costs_[1].get();
    for (std::size_t j = static_cast<std::size_t>(prefill_); j < view_.size(); ++j)
      if (view_[j] != view_.front()) {
        to = view_[j];
        break;
      }
    const InferenceCost& dest = *to;
    transfer_ = std::make_unique<KvTransfer>(context, *view_.front(), view_.front()->gpus(), dest.gpus(),
                                             typical_prompt, background);
  }
}

ServingRun ReplicaSet::run(const std::vector<Request>& requests, long concurrency,
                           const SimulationOptions& options) const {
  if (!transfer_) return simulate_serving(view_, requests, concurrency, options);
  const Disaggregation d{prefill_, transfer_.get()};
  return simulate_serving(view_, requests, concurrency, options, &d);
}

namespace {

constexpr long kFleetSlice = 8;
constexpr double kMaxFleetReplicas = 1e9;

ServingSummary run_at(const ReplicaSet& set, const LoadSpec& load, double rate, long requests, const SloSpec& slo,
                      const SizingOptions& o) {
  LoadSpec l = load;
  l.kind = ArrivalKind::poisson;
  l.rate = rate;
  l.requests = requests;
  const ServingRun run = set.run(generate_requests(l), 0, o.simulation);
  return summarize(run, rate, slo, set.first().replica().ep == 1);
}

}  // namespace

FleetSizing size_fleet(TrainingContext& context, const ModelSpec& m, const std::vector<ReplicaSpec>& candidates,
                       const LoadSpec& load, double rate, const SloSpec& slo, const SizingOptions& options,
                       DisaggregatedSpec disaggregated) {
  FleetSizing out;
  out.rate = rate;
  const long per_node = context.topology().gpus_per_node();
  std::vector<std::pair<ReplicaSpec, DisaggregatedSpec>> layouts;
  for (const ReplicaSpec& r : candidates) layouts.emplace_back(r, DisaggregatedSpec{});
  if (disaggregated.on())
    for (const ReplicaSpec& r : candidates) layouts.emplace_back(r, disaggregated);
  const double prompt = load.input.mean();
  for (const auto& [r, d] : layouts) {
    LayoutSizing s;
    s.replica = r;
    s.disaggregated = d;
    try {
      const ReplicaSet one(context, m, r, 1, d, prompt);
      // The most it serves with everything queued, then the best latencies (a light load).
      LoadSpec offline = load;
      offline.kind = ArrivalKind::offline;
      offline.requests = options.requests;
      const ServingRun full = one.run(generate_requests(offline), 0, options.simulation);
      const double capacity = summarize(full, 0, slo, true).requests_per_s;
      s.best = run_at(one, load, 0.02 * capacity, std::min<long>(options.requests, 200), slo, options);
      if (!s.best.meets_slo) {
        s.why_not = fmt::format("even lightly loaded, p{:.0f} TTFT is {:.0f} ms and p{:.0f} TPOT {:.1f} ms",
                                slo.percentile, slo.percentile >= 99 ? s.best.ttft_ms.p99 : s.best.ttft_ms.p90,
                                slo.percentile, slo.percentile >= 99 ? s.best.tpot_ms.p99 : s.best.tpot_ms.p90);
        out.layouts.push_back(s);
        continue;
      }
      // Bisection on the rate one replica (unit) serves within the goals.
      double lo = 0.02 * capacity, hi = 1.1 * capacity;
      for (int i = 0; i < 9; ++i) {
        const double mid = std::sqrt(lo * hi);
        if (run_at(one, load, mid, options.requests, slo, options).meets_slo)
          lo = mid;
        else
          hi = mid;
      }
      s.replica_rate = lo;
      // A fleet is counted in longs (replicas x instances x GPUs): beyond a billion replicas no
      // answer is useful, and the products could overflow.
      if (rate / lo > kMaxFleetReplicas)
        throw InputError(
            {}, "--rate",
            fmt::format("{} req/s needs more than {:g} replicas of {:.3g} req/s", rate, kMaxFleetReplicas, lo),
            "a lower rate or --peak");
      s.replicas = std::max<long>(1, static_cast<long>(std::ceil(rate / lo)));
      // Large fleets are checked on a slice of kFleetSlice replicas taking their share of the
      // rate: the balancer spreads load evenly, and a slice keeps the check as cheap as one node.
      for (int tries = 0; tries < 4; ++tries) {
        const long checked = std::min(s.replicas, d.on() ? kFleetSlice / d.instances() + 1 : kFleetSlice);
        const ReplicaSet fleet(context, m, r, checked, d, prompt);
        const long n = std::clamp<long>(options.requests * checked, options.requests, 8000);
        s.fleet =
            run_at(fleet, load, rate * static_cast<double>(checked) / static_cast<double>(s.replicas), n, slo, options);
        s.checked_replicas = checked;
        if (s.fleet.meets_slo) break;
        s.replicas = std::max(s.replicas + 1, static_cast<long>(std::ceil(static_cast<double>(s.replicas) * 1.05)));
      }
      // The slice's goodput stands for its share of the fleet.
      const double scale = static_cast<double>(s.replicas) / static_cast<double>(s.checked_replicas);
      s.fleet.goodput_rps *= scale;
      s.fleet.requests_per_s *= scale;
      s.fleet.output_tokens_per_s *= scale;
      s.fits = s.fleet.meets_slo;
      if (!s.fits) s.why_not = fmt::format("{} replicas still miss the goals under the whole rate", s.replicas);
      // MIG instances share a GPU: per_gpu of them to one.
      s.gpus = (s.replicas * d.instances() * r.gpus() + r.per_gpu - 1) / r.per_gpu;
      s.nodes = (s.gpus + per_node - 1) / per_node;
    } catch (const SimulationTooLarge&) {
      throw;  // not this layout's failure: the whole sizing is too large
    } catch (const InputError& e) {
      s.why_not = e.problem();
    }
    out.layouts.push_back(s);
  }
  for (std::size_t i = 0; i < out.layouts.size(); ++i) {
    const auto& s = out.layouts[i];
    if (s.fits && (out.chosen < 0 || s.gpus < out.layouts[static_cast<std::size_t>(out.chosen)].gpus))
      out.chosen = static_cast<int>(i);
  }
  return out;
}

}  // namespace gf::work
