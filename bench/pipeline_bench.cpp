// The input-pipeline model: one node, every stage's flows through the flow engine, alone and
// together, plus the what-if reruns a `gpufabric pipeline` call prints.
#include <benchmark/benchmark.h>

#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "work/pipeline.hpp"
#include "work/what_if.hpp"

namespace {

const gf::hw::Catalog& catalog() {
  static const gf::hw::Catalog c = gf::hw::Catalog::builtin();
  return c;
}

void BM_PipelineDgxA100ResNet(benchmark::State& state) {
  const gf::topo::Topology t(gf::topo::load_preset("dgx-a100", catalog()), catalog());
  const auto w = gf::work::load_workload("resnet50-imagenet");
  gf::work::PipelineOptions o;
  o.buffers = state.range(0) != 0 ? gf::work::HostBuffers::pageable : gf::work::HostBuffers::pinned;
  for (auto _ : state) {
    const auto r = gf::work::model_pipeline(t, catalog(), w, o);
    const auto lines = gf::work::what_ifs(t, catalog(), w, o, r);
    benchmark::DoNotOptimize(r.samples_per_second);
    benchmark::DoNotOptimize(lines.size());
  }
}
BENCHMARK(BM_PipelineDgxA100ResNet)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Node 0 of a 128-node cluster: the graph holds every node, the model touches one.
void BM_PipelineOn128NodeCluster(benchmark::State& state) {
  auto spec = gf::topo::load_preset("dgx-h100", catalog());
  gf::topo::ClusterOverrides ov;
  ov.nodes = 128;
  ov.fabric = gf::topo::FabricKind::fat_tree;
  gf::topo::apply_overrides(spec, ov, catalog());
  const gf::topo::Topology t(spec, catalog());
  const auto w = gf::work::load_workload("resnet50-imagenet");
  for (auto _ : state) {
    const auto r = gf::work::model_pipeline(t, catalog(), w, {});
    benchmark::DoNotOptimize(r.samples_per_second);
  }
}
BENCHMARK(BM_PipelineOn128NodeCluster)->Unit(benchmark::kMicrosecond);

}  // namespace
