// Build and route large clusters. Figures go in the issue note; there are no wall-clock bounds
// in the unit tests.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <random>

#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"

namespace {

gf::topo::ClusterSpec dgx_h100_fat_tree(long nodes, int nics, int tiers) {
  static const gf::hw::Catalog catalog = gf::hw::Catalog::builtin();
  auto spec = gf::topo::load_preset("dgx-h100", catalog);
  gf::topo::ClusterOverrides o;
  o.nodes = nodes;
  o.nics_per_node = nics;
  o.fabric = gf::topo::FabricKind::fat_tree;
  o.tiers = tiers;
  gf::topo::apply_overrides(spec, o, catalog);
  return spec;
}

const gf::hw::Catalog& catalog() {
  static const gf::hw::Catalog c = gf::hw::Catalog::builtin();
  return c;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Builds the 16,384-GPU three-tier fat-tree of DGX H100 nodes and routes every GPU to its ring
// successor (the pattern of a ring all-reduce) and to one random peer.
void BM_Build16kFatTreeAndRoute(benchmark::State& state) {
  const auto spec = dgx_h100_fat_tree(2048, 8, 3);
  std::size_t hops = 0;
  for (auto _ : state) {
    gf::topo::Topology t(spec, catalog());
    const long n = t.gpu_count();
    std::mt19937_64 rng(42);
    for (long g = 0; g < n; ++g) {
      hops += t.route_gpus(g, (g + 1) % n).links.size();
      hops += t.route_gpus(g, static_cast<long>(rng() % static_cast<std::uint64_t>(n))).links.size();
    }
    const std::size_t total = hops;
    benchmark::DoNotOptimize(total);
  }
  state.counters["routes"] = 2.0 * 16384;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_Build16kFatTreeAndRoute)->Unit(benchmark::kMillisecond);

void BM_Build16kFatTree(benchmark::State& state) {
  const auto spec = dgx_h100_fat_tree(2048, 8, 3);
  for (auto _ : state) {
    gf::topo::Topology t(spec, catalog());
    benchmark::DoNotOptimize(t.graph().link_count());
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_Build16kFatTree)->Unit(benchmark::kMillisecond);

// One route between random GPUs of the 16k cluster: the per-route cost.
void BM_RouteRandomPair16k(benchmark::State& state) {
  const gf::topo::Topology t(dgx_h100_fat_tree(2048, 8, 3), catalog());
  std::mt19937_64 rng(7);
  const auto n = static_cast<std::uint64_t>(t.gpu_count());
  for (auto _ : state) {
    const auto r = t.route_gpus(static_cast<long>(rng() % n), static_cast<long>(rng() % n));
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_RouteRandomPair16k);

// The largest cluster gpufabric builds: 100,000 GPUs (12,500 DGX H100, 4 NICs each).
void BM_Build100kGpus(benchmark::State& state) {
  const auto spec = dgx_h100_fat_tree(12500, 4, 3);
  for (auto _ : state) {
    gf::topo::Topology t(spec, catalog());
    benchmark::DoNotOptimize(t.graph().link_count());
  }
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_Build100kGpus)->Unit(benchmark::kMillisecond);

}  // namespace
