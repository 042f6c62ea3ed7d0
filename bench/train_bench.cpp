// Speed of the training-step model as the planner will call it: one layout of GPT-3 175B on a
// large cluster, and many layouts of one model on one cluster back to back.
#include <benchmark/benchmark.h>

#include <optional>
#include <vector>

#include "topo/cluster_loader.hpp"
#include "work/model_library.hpp"
#include "work/pp_schedule.hpp"
#include "work/train_step.hpp"

namespace {

const gf::hw::Catalog& catalog() {
  static const gf::hw::Catalog c = gf::hw::Catalog::builtin();
  return c;
}

gf::topo::Topology cluster(const char* preset, long nodes, double oversubscription = 1) {
  auto spec = gf::topo::load_preset(preset, catalog());
  gf::topo::ClusterOverrides o;
  o.nodes = nodes;
  o.fabric = gf::topo::FabricKind::fat_tree;
  if (oversubscription > 1) o.oversubscription = oversubscription;
  gf::topo::apply_overrides(spec, o, catalog());
  return gf::topo::Topology(spec, catalog());
}

gf::work::TrainOptions layout(long tp, long pp, long dp, long global_batch) {
  gf::work::TrainOptions o;
  o.layout.tp = tp;
  o.layout.pp = pp;
  o.layout.dp = dp;
  o.global_batch = global_batch;
  o.memory.micro_batch = 1;
  o.memory.recompute = gf::work::Recompute::full;
  return o;
}

void step(benchmark::State& state, const char* preset, long nodes, long dp) {
  const auto t = cluster(preset, nodes);
  const auto m = gf::work::library_model("gpt3-175b");
  const auto o = layout(8, 16, dp, 1536);
  double step_s = 0;
  for (auto _ : state) {
    const auto r = gf::work::train_step(t, m, o);
    benchmark::DoNotOptimize(r);
    step_s = r.step_s;
  }
  state.counters["step_s"] = step_s;
}

// GPT-3 175B, TP 8 x PP 16 x DP 8 on 1,024 A100s (128 DGX A100, fat-tree).
void BM_Gpt3_175B_1024A100(benchmark::State& s) { step(s, "dgx-a100", 128, 8); }
BENCHMARK(BM_Gpt3_175B_1024A100)->Unit(benchmark::kMillisecond);

// The same layout with DP 128 on 16,384 H100s (2,048 DGX H100).
void BM_Gpt3_175B_16384H100(benchmark::State& s) { step(s, "dgx-h100", 2048, 128); }
BENCHMARK(BM_Gpt3_175B_16384H100)->Unit(benchmark::kMillisecond);

// The planner's loop: every TP x PP x DP layout of GPT-3 175B on 1,024 A100s (TP up to 8, PP
// dividing the 96 layers) with micro-batch 1, 2 and 4, selective or full recomputation, with
// and without the distributed optimizer, where the global batch divides: evaluated back to
// back on one cluster, reported per layout.
void sweep(benchmark::State& state, bool warm, double oversubscription = 1) {
  const auto t = cluster("dgx-a100", 128, oversubscription);
  const auto m = gf::work::library_model("gpt3-175b");
  std::vector<gf::work::TrainOptions> layouts;
  for (long tp : {1, 2, 4, 8})
    for (long pp : {1, 2, 4, 8, 16, 32})
      for (long mb : {1, 2, 4})
        for (auto recompute : {gf::work::Recompute::selective, gf::work::Recompute::full})
          for (bool distributed_optimizer : {false, true}) {
            const long dp = 1024 / (tp * pp);
            auto o = layout(tp, pp, dp, 1536);
            o.memory.micro_batch = mb;
            o.memory.recompute = recompute;
            o.memory.distributed_optimizer = distributed_optimizer;
            if (1536 % (mb * dp) == 0) layouts.push_back(o);
          }
  long evaluated = 0;
  std::optional<gf::work::TrainingContext> context;
  if (warm) {
    context.emplace(t);
    for (const auto& o : layouts) benchmark::DoNotOptimize(gf::work::train_step(*context, m, o));
  }
  for (auto _ : state) {
    // Cold: a new context per sweep, so the average includes building every communicator and
    // pricing every collective once. Warm: one context for every sweep (a planner revisiting).
    if (!warm) context.emplace(t);
    for (const auto& o : layouts) {
      const auto r = gf::work::train_step(*context, m, o);
      benchmark::DoNotOptimize(r);
      ++evaluated;
    }
  }
  state.counters["layouts"] = static_cast<double>(layouts.size());
  // What one context met in its last sweep: communicators built and flow-engine runs.
  state.counters["communicators"] = static_cast<double>(context->communicators_built());
  state.counters["flow_runs"] = static_cast<double>(context->flow_runs());
  state.counters["collectives"] = static_cast<double>(context->collectives_priced());
  state.counters["layouts_per_s"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
}
void BM_Gpt3_175B_LayoutSweep_1024A100_Cold(benchmark::State& s) { sweep(s, false); }
BENCHMARK(BM_Gpt3_175B_LayoutSweep_1024A100_Cold)->Unit(benchmark::kMillisecond);
void BM_Gpt3_175B_LayoutSweep_1024A100_Warm(benchmark::State& s) { sweep(s, true); }
BENCHMARK(BM_Gpt3_175B_LayoutSweep_1024A100_Warm)->Unit(benchmark::kMillisecond);
// The same on leaves oversubscribed 4:1, where trees' contention runs on every rank.
void BM_Gpt3_175B_LayoutSweep_1024A100_Cold_Oversubscribed4(benchmark::State& s) { sweep(s, false, 4); }
BENCHMARK(BM_Gpt3_175B_LayoutSweep_1024A100_Cold_Oversubscribed4)->Unit(benchmark::kMillisecond);

// Megatron's pipeline schedule as a task graph (what `train --trace` and the full-graph
// reference run), against its closed form (what every evaluation runs): GPT-3 175B's PP 16 with
// 192 micro-batches, and an interleaved PP 8 x VPP 3 with 64.
void pipeline_graph(benchmark::State& state, long stages, long chunks, long micro_batches) {
  const gf::work::PipelineShape shape{stages, chunks, micro_batches};
  const std::vector<double> no_links;
  double makespan = 0;
  for (auto _ : state) {
    const auto g = gf::work::build_pipeline(shape, 1e-3, 2e-3, gf::work::fixed_transfers(1e-4));
    makespan = gf::work::run_pipeline(g, no_links, false).makespan_s;
    benchmark::DoNotOptimize(makespan);
  }
  state.counters["tasks"] = static_cast<double>(2 * stages * chunks * micro_batches);
}
void BM_PipelineGraph_PP16_M192(benchmark::State& s) { pipeline_graph(s, 16, 1, 192); }
BENCHMARK(BM_PipelineGraph_PP16_M192)->Unit(benchmark::kMillisecond);
void BM_PipelineGraph_PP8_VPP3_M64(benchmark::State& s) { pipeline_graph(s, 8, 3, 64); }
BENCHMARK(BM_PipelineGraph_PP8_VPP3_M64)->Unit(benchmark::kMillisecond);
void BM_PipelineClosedForm(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gf::work::pipeline_closed_form({16, 1, 192}, 1e-3, 2e-3, 1e-4));
}
BENCHMARK(BM_PipelineClosedForm);

}  // namespace
