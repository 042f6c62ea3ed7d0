// Speed of the scheduler on the reference case: the Alibaba PAI 2023 default trace
// (8,152 pods) on its 1,213-node, 6,212-GPU cluster, replayed once per policy; arrivals
// compressed so the jobs offer 90% of the GPUs over the arrival window, and FGD's fill experiment (one seed, to 130% of
// the GPUs).
#include <benchmark/benchmark.h>

#include "sched/fill_experiment.hpp"
#include "sched/simulator.hpp"
#include "sched/trace_reader.hpp"
#include "sched/training_runtime.hpp"
#include "topo/cluster_loader.hpp"

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

namespace {

// Training jobs whose run time the training model gives for their placement, beside the jobs
// sharing their leaf uplinks (data/traces/examples/training-mix.csv: 120 jobs on 24 DGX H100
// under a 7:1 tapered fat-tree), every policy; each iteration builds a fresh runtime (cold caches).
void BM_Schedule_TrainingMix(benchmark::State& state) {
  static const gf::hw::Catalog catalog = gf::hw::Catalog::builtin();
  auto spec = gf::topo::load_preset("dgx-h100", catalog);
  gf::topo::ClusterOverrides o;
  o.nodes = 24;
  o.fabric = gf::topo::FabricKind::fat_tree;
  o.oversubscription = 7;
  gf::topo::apply_overrides(spec, o, catalog);
  const gf::topo::Topology t(spec, catalog);
  auto trace =
      gf::sched::read_trace(std::string(GPUFABRIC_SOURCE_DIR) + "/data/traces/examples/training-mix.csv", false);
  gf::sched::TrainingRuntime::fill_durations(t, trace.jobs);
  const gf::sched::ClusterState c(gf::sched::nodes_from_topology(t));
  const auto policy = gf::sched::make_policy(kPolicies[state.range(0)]);
  for (auto _ : state) {
    gf::sched::TrainingRuntime runtime(t, trace.jobs, c.nodes());
    gf::sched::SimOptions so;
    so.runtime = &runtime;
    const auto r = gf::sched::simulate(c, trace.jobs, *policy, so);
    benchmark::DoNotOptimize(r.metrics.jct_s.mean);
  }
  state.SetLabel(kPolicies[state.range(0)]);
}
BENCHMARK(BM_Schedule_TrainingMix)->DenseRange(0, 7)->Unit(benchmark::kMillisecond);

}  // namespace
