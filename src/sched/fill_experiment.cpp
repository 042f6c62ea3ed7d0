#include "sched/fill_experiment.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.hpp"
#include "sched/fragmentation.hpp"

namespace gf::sched {

namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);  // linear between ranks
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

FillCurve fill_experiment(const ClusterState& cluster, const std::vector<Job>& pods, const Policy& policy,
                          const FillOptions& o) {
  if (o.repeats < 1) throw InputError({}, "--repeats", "fewer than one repeat", "1 or more");
  if (!(o.up_to > 0) || o.up_to > 10)
    throw InputError({}, "--fill", "the arrival target is out of range", "0 to 10 (x the cluster's GPUs)");
  if (cluster.gpu_count() == 0) throw InputError({}, "--nodes-file", "the cluster has no GPUs", "nodes with GPUs");
  const TargetWorkload workload = target_workload(pods);
  const double capacity = static_cast<double>(cluster.gpu_count());
  std::vector<double> marks = o.report_at;
  std::sort(marks.begin(), marks.end());
  marks.erase(std::remove_if(marks.begin(), marks.end(), [&](double m) { return m > o.up_to + 1e-9; }), marks.end());
  // Per mark, per repeat.
  std::vector<std::vector<double>> unalloc(marks.size()), frag(marks.size()), failed(marks.size());
  for (int r = 0; r < o.repeats; ++r) {
    std::mt19937_64 rng(o.seed + static_cast<std::uint64_t>(r));
    std::vector<std::size_t> order(pods.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    // Then copies drawn with replacement until the demand would pass the target.
    double demand = 0;
    for (std::size_t i : order) demand += pods[i].gpu_demand();
    std::uniform_int_distribution<std::size_t> pick(0, pods.size() - 1);
    for (int guard = 0; demand < o.up_to * capacity && guard < 10'000'000; ++guard) {
      const std::size_t i = pick(rng);
      if (demand + pods[i].gpu_demand() > o.up_to * capacity) break;
      demand += pods[i].gpu_demand();
      order.push_back(i);
    }
    ClusterState c = cluster;
    FragmentationMeter meter(workload);
    double arrived = 0;
    long dropped = 0;
    std::size_t next = 0;
    for (std::size_t i : order) {
      const Job& p = pods[i];
      arrived += p.gpu_demand();
      if (!place_job(c, p, policy, workload, 0) && p.pod.wants_gpu()) ++dropped;
      while (next < marks.size() && arrived >= marks[next] * capacity - 1e-9) {
        unalloc[next].push_back(100.0 * (1.0 - static_cast<double>(c.allocated_milli()) / 1000.0 / capacity));
        frag[next].push_back(100.0 * meter.gpus(c) / capacity);
        failed[next].push_back(static_cast<double>(dropped));
        ++next;
      }
    }
    // Marks the arrivals did not reach (the trace is too small for them): the end state.
    for (; next < marks.size(); ++next) {
      unalloc[next].push_back(100.0 * (1.0 - static_cast<double>(c.allocated_milli()) / 1000.0 / capacity));
      frag[next].push_back(100.0 * meter.gpus(c) / capacity);
      failed[next].push_back(static_cast<double>(dropped));
    }
  }
  FillCurve out;
  out.policy = policy.name();
  for (std::size_t m = 0; m < marks.size(); ++m) {
    FillPoint p;
    p.arrived = marks[m];
    p.unallocated_median = quantile(unalloc[m], 0.5);
    p.unallocated_p25 = quantile(unalloc[m], 0.25);
    p.unallocated_p75 = quantile(unalloc[m], 0.75);
    p.fragmented_median = quantile(frag[m], 0.5);
    p.failed_pods_median = quantile(failed[m], 0.5);
    out.points.push_back(p);
  }
  return out;
}

}  // namespace gf::sched
