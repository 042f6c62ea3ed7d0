// Speed of the collective model: the flow engine and the closed form at scale.
#include <benchmark/benchmark.h>

#include <deque>
#include <vector>

#include "comm/collective_tasks.hpp"
#include "comm/model.hpp"
#include "sim/engine.hpp"
#include "topo/cluster_loader.hpp"

namespace {

const gf::hw::Catalog& catalog() {
  static const gf::hw::Catalog c = gf::hw::Catalog::builtin();
  return c;
}

gf::topo::Topology dgx_h100(long nodes, int tiers) {
  auto spec = gf::topo::load_preset("dgx-h100", catalog());
  gf::topo::ClusterOverrides o;
  o.nodes = nodes;
  o.fabric = gf::topo::FabricKind::fat_tree;
  o.tiers = tiers;
  gf::topo::apply_overrides(spec, o, catalog());
  return gf::topo::Topology(spec, catalog());
}

void predict(benchmark::State& state, long nodes, int tiers, gf::comm::Op op, double size, gf::comm::Engine engine,
             std::optional<gf::comm::Algo> algo = {}) {
  const auto t = dgx_h100(nodes, tiers);
  const gf::comm::Communicator c(t, 0);
  gf::comm::CollectiveRequest req;
  req.op = op;
  req.size = size;
  req.engine = engine;
  req.algo = algo;
  if (algo) req.proto = gf::comm::Proto::simple;
  double busbw = 0;
  for (auto _ : state) {
    const auto r = gf::comm::predict(c, req);
    // The const overload: Debian's Google Benchmark 1.7.1 miscompiles DoNotOptimize on a
    // non-const double under GCC 12 (its "+m,r" constraint).
    benchmark::DoNotOptimize(r);
    busbw = r.busbw_GBps;
  }
  state.counters["busbw_GBps"] = busbw;
}

// (a) all_reduce of 1 GiB on 1,024 GPUs (128 DGX H100, two-tier fat-tree), flow engine, with
// the tuner's choice of algorithm (NVLS-tree) and with Ring forced.
void BM_AllReduce1GiB_1024Gpus_Flow(benchmark::State& s) {
  predict(s, 128, 2, gf::comm::Op::all_reduce, 1 << 30, gf::comm::Engine::flow);
}
BENCHMARK(BM_AllReduce1GiB_1024Gpus_Flow)->Unit(benchmark::kMillisecond);

void BM_AllReduce1GiB_1024Gpus_Flow_Ring(benchmark::State& s) {
  predict(s, 128, 2, gf::comm::Op::all_reduce, 1 << 30, gf::comm::Engine::flow, gf::comm::Algo::ring);
}
BENCHMARK(BM_AllReduce1GiB_1024Gpus_Flow_Ring)->Unit(benchmark::kMillisecond);

// (b) the same on the closed form.
void BM_AllReduce1GiB_1024Gpus_Analytic(benchmark::State& s) {
  predict(s, 128, 2, gf::comm::Op::all_reduce, 1 << 30, gf::comm::Engine::analytic);
}
BENCHMARK(BM_AllReduce1GiB_1024Gpus_Analytic)->Unit(benchmark::kMicrosecond);

void BM_AllReduce1GiB_1024Gpus_Analytic_Ring(benchmark::State& s) {
  predict(s, 128, 2, gf::comm::Op::all_reduce, 1 << 30, gf::comm::Engine::analytic, gf::comm::Algo::ring);
}
BENCHMARK(BM_AllReduce1GiB_1024Gpus_Analytic_Ring)->Unit(benchmark::kMicrosecond);

// (c) alltoall of 256 MiB on 4,096 GPUs (512 DGX H100, three-tier fat-tree), flow engine.
void BM_AllToAll256MiB_4096Gpus_Flow(benchmark::State& s) {
  predict(s, 512, 3, gf::comm::Op::alltoall, 256.0 * (1 << 20), gf::comm::Engine::flow);
}
BENCHMARK(BM_AllToAll256MiB_4096Gpus_Flow)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

namespace {

// (d) The library call the training model and the planner make: one analytic all_reduce
// prediction (NCCL's tuner choice, its time with fill, and the comparison with the other
// candidates) on one DGX H100, 1,024 nodes and 8,192 nodes.
void BM_AllReduce25MiB_Analytic_1Node(benchmark::State& s) {
  predict(s, 1, 2, gf::comm::Op::all_reduce, 25.0 * (1 << 20), gf::comm::Engine::analytic);
}
BENCHMARK(BM_AllReduce25MiB_Analytic_1Node)->Unit(benchmark::kMicrosecond);

void BM_AllReduce25MiB_Analytic_1024Nodes(benchmark::State& s) {
  predict(s, 1024, 3, gf::comm::Op::all_reduce, 25.0 * (1 << 20), gf::comm::Engine::analytic);
}
BENCHMARK(BM_AllReduce25MiB_Analytic_1024Nodes)->Unit(benchmark::kMillisecond);

void BM_AllReduce25MiB_Analytic_8192Nodes(benchmark::State& s) {
  predict(s, 8192, 3, gf::comm::Op::all_reduce, 25.0 * (1 << 20), gf::comm::Engine::analytic);
}
BENCHMARK(BM_AllReduce25MiB_Analytic_8192Nodes)->Unit(benchmark::kMillisecond)->Iterations(2);

// (e) A first prediction on a fresh communicator (nothing cached): what a planner pays once per
// group shape, on 1,024 and on 8,192 DGX H100 nodes (65,536 GPUs, the target size).
void first_prediction(benchmark::State& state, long nodes) {
  const auto t = dgx_h100(nodes, 3);
  gf::comm::CollectiveRequest req;
  req.op = gf::comm::Op::all_reduce;
  req.size = 25.0 * (1 << 20);
  req.engine = gf::comm::Engine::analytic;
  for (auto _ : state) {
    const gf::comm::Communicator c(t, 0);
    const auto r = gf::comm::predict(c, req);
    benchmark::DoNotOptimize(r);
  }
}
void BM_AllReduce25MiB_FirstPrediction_1024Nodes(benchmark::State& s) { first_prediction(s, 1024); }
BENCHMARK(BM_AllReduce25MiB_FirstPrediction_1024Nodes)->Unit(benchmark::kMillisecond);
void BM_AllReduce25MiB_FirstPrediction_8192Nodes(benchmark::State& s) { first_prediction(s, 8192); }
BENCHMARK(BM_AllReduce25MiB_FirstPrediction_8192Nodes)->Unit(benchmark::kMillisecond);

// (f) Cached predictions: every size of an nccl-tests sweep on one communicator, as a training
// model asks for every bucket size of a step.
void BM_AllReduce_CachedSweep_1024Nodes(benchmark::State& state) {
  const auto t = dgx_h100(1024, 3);
  const gf::comm::Communicator c(t, 0);
  gf::comm::CollectiveRequest req;
  req.op = gf::comm::Op::all_reduce;
  req.engine = gf::comm::Engine::analytic;
  for (double s = 8; s <= 8.0 * (1 << 30); s *= 2) {  // warm the cache once
    req.size = s;
    (void)gf::comm::predict(c, req);
  }
  double s = 8;
  for (auto _ : state) {
    req.size = s;
    const auto r = gf::comm::predict(c, req);
    benchmark::DoNotOptimize(r);
    s = s >= 8.0 * (1 << 30) ? 8 : s * 2;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AllReduce_CachedSweep_1024Nodes)->Unit(benchmark::kMicrosecond);

// (g) A data-parallel step's communication in one task graph: on 16 DGX H100 nodes, the 8
// rail groups (GPU r of every node) each all-reduce 25 MiB at once, sharing the fabric; the
// graph is built and run in the flow engine, as a training step would.
void BM_EightRailGroups_25MiB_InOneGraph_16Nodes(benchmark::State& state) {
  const auto t = dgx_h100(16, 2);
  std::deque<gf::comm::Communicator> groups;  // communicators do not move
  for (int r = 0; r < 8; ++r) {
    std::vector<long> gpus;
    for (long n = 0; n < 16; ++n) gpus.push_back(n * 8 + r);
    groups.emplace_back(t, gpus);
  }
  gf::comm::CollectiveRequest req;
  req.size = 25.0 * (1 << 20);
  double makespan = 0;
  for (auto _ : state) {
    gf::sim::TaskGraph g;
    for (const auto& c : groups) (void)gf::comm::add_collective(g, c, req);
    const auto r = gf::sim::simulate(g, groups.front().capacity());
    benchmark::DoNotOptimize(r);  // the const overload (see predict above)
    makespan = r.makespan.value();
  }
  state.counters["makespan_us"] = makespan * 1e6;
}
BENCHMARK(BM_EightRailGroups_25MiB_InOneGraph_16Nodes)->Unit(benchmark::kMicrosecond);

}  // namespace
