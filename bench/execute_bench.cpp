// Speed of the path the Python module takes (cli::execute: parse the command, load the cluster,
// model, format JSON) against the typed library call it wraps (comm::sweep_collective on a
// topology already built): what a sweep from Python pays per call beyond the model.
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "comm/collective_sweep.hpp"
#include "topo/cluster_loader.hpp"

namespace {

void BM_ExecuteCollectiveJson(benchmark::State& state) {
  const std::vector<std::string> args = {"collective", "all_reduce", "dgx-h100", "--nodes",  "4",   "-b",
                                         "256M",       "-e",         "256M",     "--format", "json"};
  std::ostringstream err;
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string out = gf::cli::execute(args, err);
    bytes += out.size();
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["json_bytes"] = static_cast<double>(bytes) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ExecuteCollectiveJson)->Unit(benchmark::kMillisecond);

void BM_SweepCollectiveTyped(benchmark::State& state) {
  const gf::hw::Catalog catalog = gf::hw::Catalog::builtin();
  auto spec = gf::topo::load_preset("dgx-h100", catalog);
  spec.nodes = 4;
  const gf::topo::Topology t(spec, catalog);
  gf::comm::CollectiveSweepRequest r;
  r.sizes = {256.0 * 1024 * 1024};
  for (auto _ : state) {
    const auto sweep = gf::comm::sweep_collective(t, gf::comm::nccl_params(), r);
    benchmark::DoNotOptimize(sweep.rows.front().result.busbw_GBps);
  }
}
BENCHMARK(BM_SweepCollectiveTyped)->Unit(benchmark::kMillisecond);

}  // namespace
