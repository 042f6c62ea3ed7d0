// Speed of the planner (issue 13's target): every valid parallel layout of the 530B model
// (Megatron-Turing NLG's shape: 105 layers, hidden 20,480, 128 heads; global batch 2,520) on
// 2,240 to 5,040 A100s across 24 fabric designs, the built-in plan `mt-nlg-530b`, on one thread and
// on every core. Counters: valid layouts per second (each evaluated by the memory model, the
// ones that fit also by the step model on the cluster's topology), and the timed ones alone.
// Calculon's llm-optimal-execution search evaluates about 430 layouts per second without topology.
#include <benchmark/benchmark.h>

#include <thread>

#include "plan/plan_spec.hpp"
#include "plan/planner.hpp"
#include "plan/recommend.hpp"

namespace {

void plan_530b(benchmark::State& state) {
  static const gf::hw::Catalog catalog = gf::hw::Catalog::builtin();
  static const gf::plan::PriceCatalog prices = gf::plan::builtin_prices();
  const auto plan = gf::plan::builtin_plan("mt-nlg-530b");
  gf::plan::PlannerOptions o;
  o.threads = static_cast<int>(state.range(0));
  double layouts = 0, timed = 0, designs = 0;
  for (auto _ : state) {
    const auto run = gf::plan::run_plan(plan, catalog, prices, o);
    const auto answer = gf::plan::analyse(plan, run.candidates, run.designs.skipped, run.designs.designs.size(),
                                          gf::plan::model_version());
    benchmark::DoNotOptimize(answer);
    for (const auto& c : run.candidates) {
      layouts += c.value("layouts_evaluated", 0.0);
      timed += c.value("layouts_timed", 0.0);
    }
    designs = static_cast<double>(run.designs.designs.size());
  }
  state.counters["designs"] = designs;
  state.counters["layouts_per_s"] = benchmark::Counter(layouts, benchmark::Counter::kIsRate);
  state.counters["timed_per_s"] = benchmark::Counter(timed, benchmark::Counter::kIsRate);
}
BENCHMARK(plan_530b)
    ->Name("BM_Plan_530B_24Designs_2240to5040A100")
    ->Arg(1)
    ->Arg(static_cast<long>(std::max(1u, std::thread::hardware_concurrency())))
    ->Unit(benchmark::kSecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
