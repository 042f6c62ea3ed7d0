// Speed of the serving model as the fleet planner will call it: Vidur's reference case (one hour
// of Poisson traffic at 50 requests per second against a 70B model on four H100s), and a sizing
// search over TP 1-8 and replica counts for one SLO.
#include <benchmark/benchmark.h>

#include "topo/cluster_loader.hpp"
#include "work/model_library.hpp"
#include "work/serving_fleet.hpp"

namespace {

gf::topo::Topology dgx_h100() {
  static const gf::hw::Catalog c = gf::hw::Catalog::builtin();
  return gf::topo::Topology(gf::topo::load_preset("dgx-h100", c), c);
}

gf::work::LoadSpec poisson(double rate, long requests) {
  gf::work::LoadSpec l;
  l.kind = gf::work::ArrivalKind::poisson;
  l.rate = rate;
  l.requests = requests;
  l.input = gf::work::LengthDistribution(1024);
  l.output = gf::work::LengthDistribution(256);
  return l;
}

gf::work::ReplicaSpec tp4_fp8() {
  gf::work::ReplicaSpec r;
  r.tp = 4;
  r.weights = r.kv = gf::work::WeightFormat::fp8;
  return r;
}

// Llama 3.1 70B, TP 4 on four H100s, fp8, 1,024 tokens in and 256 out, 50 req/s for an hour
// (180,000 requests). The replica cannot keep up (the queue grows): the simulator still steps
// every iteration of every request.
void BM_Serve_OneHour_50rps_70B_4xH100(benchmark::State& state) {
  const auto t = dgx_h100();
  gf::work::TrainingContext ctx(t);
  const gf::work::ReplicaSet set(ctx, gf::work::library_model("llama3.1-70b"), tp4_fp8(), 1);
  const auto requests = gf::work::generate_requests(poisson(50, 180000));
  long iterations = 0;
  for (auto _ : state) {
    const auto run = gf::work::simulate_serving(set.replicas(), requests, 0, {});
    iterations = run.iterations;
    benchmark::DoNotOptimize(iterations);
  }
  state.counters["iterations"] = static_cast<double>(iterations);
}
BENCHMARK(BM_Serve_OneHour_50rps_70B_4xH100)->Unit(benchmark::kMillisecond);

// The same hour at a rate the replica serves (4 req/s, 14,400 requests): latency-bound traffic.
void BM_Serve_OneHour_4rps_70B_4xH100(benchmark::State& state) {
  const auto t = dgx_h100();
  gf::work::TrainingContext ctx(t);
  const gf::work::ReplicaSet set(ctx, gf::work::library_model("llama3.1-70b"), tp4_fp8(), 1);
  const auto requests = gf::work::generate_requests(poisson(4, 14400));
  for (auto _ : state) benchmark::DoNotOptimize(gf::work::simulate_serving(set.replicas(), requests, 0, {}).iterations);
}
BENCHMARK(BM_Serve_OneHour_4rps_70B_4xH100)->Unit(benchmark::kMillisecond);

// Fleet sizing for 20 req/s within TTFT 500 ms and TPOT 50 ms (p90), over TP 1, 2, 4, 8.
void BM_SizeFleet_70B_TP1to8(benchmark::State& state) {
  const auto t = dgx_h100();
  std::vector<gf::work::ReplicaSpec> candidates;
  for (long tp : {1, 2, 4, 8}) {
    gf::work::ReplicaSpec r;
    r.tp = tp;
    r.weights = r.kv = gf::work::WeightFormat::fp8;
    candidates.push_back(r);
  }
  gf::work::SloSpec slo;
  slo.ttft_s = 0.5;
  slo.tpot_s = 0.05;
  gf::work::SizingOptions o;
  o.requests = 600;
  for (auto _ : state) {
    gf::work::TrainingContext ctx(t);
    const auto f =
        gf::work::size_fleet(ctx, gf::work::library_model("llama3.1-70b"), candidates, poisson(20, 600), 20, slo, o);
    benchmark::DoNotOptimize(f.chosen);
  }
}
BENCHMARK(BM_SizeFleet_70B_TP1to8)->Unit(benchmark::kMillisecond);

}  // namespace
