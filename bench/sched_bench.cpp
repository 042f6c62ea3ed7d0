// Speed of the scheduler on the reference case: the Alibaba PAI 2023 default trace
// (8,152 pods) on its 1,213-node, 6,212-GPU cluster, replayed once per policy; arrivals
// compressed so the jobs offer 90% of the GPUs over the arrival window, and FGD's fill experiment (one seed, to 130% of
// the GPUs).
#include <benchmark/benchmark.h>

#include "sched/fill_experiment.hpp"
#include "sched/simulator.hpp"
#include "sched/trace_reader.hpp"

namespace {

const std::string kDir = std::string(GPUFABRIC_SOURCE_DIR) + "/data/traces/alibaba-pai-2023/";

const gf::sched::Trace& trace() {
  static const auto t = gf::sched::read_trace(kDir + "openb_pod_list_default.csv", false);
  return t;
}

const gf::sched::ClusterState& cluster() {
  static const auto c = [] {
    std::vector<std::string> skipped;
    return gf::sched::ClusterState(gf::sched::read_nodes(kDir + "openb_node_list_gpu_node.csv", false, skipped));
  }();
  return c;
}

const char* const kPolicies[] = {"fifo",     "first-fit", "best-fit", "random-fit",
                                 "backfill", "topology",  "fgd",      "tiresias"};

void BM_Schedule_PaiReplay(benchmark::State& state) {
  const auto policy = gf::sched::make_policy(kPolicies[state.range(0)]);
  gf::sched::SimOptions o;
  o.time_scale = gf::sched::time_scale_for_load(trace().jobs, cluster().gpu_count(), 0.9);
  long started = 0;
  for (auto _ : state) {
    const auto r = gf::sched::simulate(cluster(), trace().jobs, *policy, o);
    started = r.metrics.queue_s.count;
    benchmark::DoNotOptimize(r.metrics.allocation);
  }
  state.SetLabel(kPolicies[state.range(0)]);
  state.counters["pods"] = static_cast<double>(trace().jobs.size());
  state.counters["started"] = static_cast<double>(started);
}
BENCHMARK(BM_Schedule_PaiReplay)->DenseRange(0, 7)->Unit(benchmark::kMillisecond);

void BM_Schedule_FillOneSeed(benchmark::State& state) {
  static const char* const fill_policies[] = {"first-fit", "best-fit", "random-fit", "topology", "fgd"};
  const auto policy = gf::sched::make_policy(fill_policies[state.range(0)]);
  gf::sched::FillOptions o;
  o.repeats = 1;
  for (auto _ : state) {
    const auto r = gf::sched::fill_experiment(cluster(), trace().jobs, *policy, o);
    benchmark::DoNotOptimize(r.points.back().unallocated_median);
  }
  state.SetLabel(fill_policies[state.range(0)]);
}
BENCHMARK(BM_Schedule_FillOneSeed)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

}  // namespace
