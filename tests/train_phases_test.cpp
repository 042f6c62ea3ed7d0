// The training step's phases one by one (src/work/train_*.hpp): each takes a small request and
// returns a plain result, so each is checked here on inputs whose answer is known by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "test_support.hpp"
#include "work/model_library.hpp"
#include "work/train_compute.hpp"
#include "work/train_data_parallel.hpp"
#include "work/train_groups.hpp"
#include "work/train_inline_comm.hpp"
#include "work/train_input_stall.hpp"
#include "work/train_memory_fit.hpp"
#include "work/train_pipeline.hpp"
#include "work/train_placement.hpp"
#include "work/train_shape.hpp"
#include "work/train_stage.hpp"

using gf::test::input_error;
using gf::test::preset;

namespace gf::work {
namespace {

topo::Topology nodes(const char* name, long count) {
  topo::ClusterOverrides ov;
  ov.nodes = count;
  return preset(name, ov);
}

TrainOptions layout(long tp, long pp, long dp, long micro, long global) {
  TrainOptions o;
  o.layout.tp = tp;
  o.layout.pp = pp;
  o.layout.dp = dp;
  o.memory.micro_batch = micro;
  o.global_batch = global;
  return o;
}

// Eight layers of 1 ms forward, 2 ms backward and 100 MB of gradients each.
std::vector<LayerCost> uniform_layers() {
  std::vector<LayerCost> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"L", 1e-3, 2e-3, 100e6});
  return layers;
}

TEST(TrainPhases, ShapeSplitsTheGlobalBatchIntoMicroBatchesPerReplica) {
  const auto m = library_model("llama3.1-8b");
  const TrainShape s = check_train_shape(m, layout(2, 1, 4, 2, 64), 8);
  EXPECT_EQ(s.micro_batch, 2);
  EXPECT_EQ(s.global_batch, 64);
  EXPECT_EQ(s.micro_batches, 8);  // 64 / (2 x 4)
  EXPECT_EQ(s.moe_overlap, MoeOverlap::none);
  // No global batch: one micro-batch per replica.
  EXPECT_EQ(check_train_shape(m, layout(2, 1, 4, 2, 0), 8).global_batch, 8);
  EXPECT_NE(input_error([&] { check_train_shape(m, layout(2, 1, 4, 2, 60), 8); }).find("60"), std::string::npos);
  // The layout must use the job's GPUs, all of them.
  EXPECT_NE(input_error([&] { check_train_shape(m, layout(2, 1, 4, 2, 64), 16); }).find("16"), std::string::npos);
}

TEST(TrainPhases, RepresentativeGroupsAreGpuZerosOnThePlacedGpus) {
  const auto t = nodes("dgx-h100", 2);
  TrainingContext cache(t);
  TrainOptions o = layout(2, 1, 4, 1, 4);
  const RankGroups first = representative_groups(cache, {o.layout, o.order, o.placement, true});
  ASSERT_NE(first.tp, nullptr);
  EXPECT_EQ(first.tp->gpu_of(0), 0);
  EXPECT_EQ(first.tp->gpu_of(1), 1);
  EXPECT_EQ(first.ep, nullptr);
  EXPECT_TRUE(first.cp_ring.empty());
  // Rank r on GPU 15 - r: GPU 0's TP group is GPUs 15 and 14.
  o.placement.resize(8);
  std::iota(o.placement.rbegin(), o.placement.rend(), 8L);
  const RankGroups placed = representative_groups(cache, {o.layout, o.order, o.placement, true});
  ASSERT_NE(placed.tp, nullptr);
  ASSERT_EQ(placed.tp->ranks(), 2);
  EXPECT_EQ(std::min(placed.tp->gpu_of(0), placed.tp->gpu_of(1)), 14);
  EXPECT_EQ(std::max(placed.tp->gpu_of(0), placed.tp->gpu_of(1)), 15);
  EXPECT_EQ(job_gpus(t, o), 8);
}

TEST(TrainPhases, BackgroundJobRunsOnTheGpusTheJobLeaves) {
  const auto t = nodes("dgx-h100", 4);
  TrainOptions o = layout(1, 1, 16, 1, 16);
  o.gpus = 16;
  EXPECT_TRUE(background_job({t, o, 16}).job.gpus.empty());  // none asked for
  o.background_bytes = 1e9;
  const PlacedBackground last = background_job({t, o, 16});
  ASSERT_EQ(last.job.gpus.size(), 16U);
  EXPECT_EQ(last.job.gpus.front(), 16);
  EXPECT_EQ(last.assumptions.size(), 1U);
  // Placed on the last two nodes, it leaves the first two to the other job.
  o.placement.resize(16);
  std::iota(o.placement.begin(), o.placement.end(), 16L);
  const PlacedBackground first = background_job({t, o, 16});
  ASSERT_EQ(first.job.gpus.size(), 16U);
  EXPECT_EQ(first.job.gpus.back(), 15);
  o.placement.clear();
  EXPECT_NE(input_error([&] { background_job({t, o, 32}); }).find("no GPUs are left"), std::string::npos);
}

TEST(TrainPhases, MemoryFitSaysWhatWouldFit) {
  const auto t = nodes("dgx-h100", 1);
  const auto m = library_model("llama3.1-8b");
  const TrainOptions o = layout(1, 1, 8, 1, 16);
  const TrainShape s = check_train_shape(m, o, 8);
  const MemoryFit fit = fit_memory({m, o.layout, o.memory, s, t.gpu_spec(), t.gpus_per_node()});
  EXPECT_EQ(fit.options.micro_batches, 2);
  EXPECT_EQ(fit.options.gpus_per_node, 8);
  EXPECT_FALSE(fit.fits);  // 8B parameters' weights, gradients and Adam states on every GPU
  EXPECT_GT(fit.breakdown.total, fit.gpu_memory);
  // Sharding the optimizer states over the eight GPUs, for one, would make it fit.
  EXPECT_FALSE(fit.fit_options.empty());
}

TEST(TrainPhases, MeasuredGemmRateReplacesTheCeilingUpToThePeak) {
  const auto t = nodes("dgx-h100", 1);
  const std::string source = "a test";
  const ComputeRates published = compute_rates({t.gpu_spec(), Precision::bf16, 0, source});
  EXPECT_TRUE(published.assumptions.empty());
  const double peak_tflops = peak_flops(published.context) / 1e12;
  const ComputeRates half = compute_rates({t.gpu_spec(), Precision::bf16, peak_tflops / 2, source});
  EXPECT_NEAR(half.context.gemm_ceiling, 0.5, 1e-12);
  ASSERT_EQ(half.assumptions.size(), 1U);
  EXPECT_NE(half.assumptions[0].find(source), std::string::npos);
  EXPECT_NE(input_error([&] {
              compute_rates({t.gpu_spec(), Precision::bf16, 2 * peak_tflops, source});
            }),
            std::string());
}

// The phases up to the collectives in a transformer layer's critical path, as train_step runs them.
struct UpToCollectives {
  TrainShape shape;
  MemoryFit fit;
  ComputeRates rates;
  RankGroups groups;
  TransformerCosts costs;
  InlineComm comm;
};

UpToCollectives up_to_collectives(TrainingContext& cache, const ModelSpec& m, const TrainOptions& o) {
  static const std::string source;
  static const std::string dtype = "bfloat16";
  const topo::Topology& t = cache.topology();
  const TrainShape s = check_train_shape(m, o, o.layout.gpus());
  const MemoryFit fit = fit_memory({m, o.layout, o.memory, s, t.gpu_spec(), t.gpus_per_node()});
  const ComputeRates rates = compute_rates({t.gpu_spec(), o.memory.precision, 0, source});
  const RankGroups groups = representative_groups(cache, {o.layout, o.order, o.placement, true});
  const TransformerCosts costs = transformer_costs({m, o.layout, fit.options, rates.context});
  const InlineComm comm = inline_collectives(
      cache, {groups, o.layout, rates.context, dtype, s.moe_overlap, s.micro_batches, costs, m.moe.has_value()});
  return {s, fit, rates, groups, costs, comm};
}

TEST(TrainPhases, StageHoldsTheEmbeddingFirstAndTheOutputLast) {
  const auto t = nodes("dgx-h100", 1);
  TrainingContext cache(t);
  const auto m = library_model("llama3.1-8b");
  for (const long pp : {1L, 4L}) {
    const TrainOptions o = layout(2, pp, 4 / pp, 1, 8);
    const UpToCollectives p = up_to_collectives(cache, m, o);
    EXPECT_GT(p.comm.dense.tp_s, 0.0);  // TP 2: an all-reduce per half and pass
    EXPECT_EQ(p.comm.dense.ep.forward_s, 0.0);
    const StageLayers stage = representative_stage({m, o.layout, p.shape, p.costs, p.comm, Kernels::fused});
    const long stage_layers = m.layers / pp;
    SCOPED_TRACE(pp);
    // With a pipeline the last stage (the output projection and loss) is the slowest.
    EXPECT_EQ(stage.stage, pp - 1);
    EXPECT_EQ(static_cast<long>(stage.layers.size()), stage_layers + (pp == 1 ? 2 : 1));
    if (pp == 1) {
      EXPECT_EQ(stage.layers.front().name, "embedding");
    }
    EXPECT_EQ(stage.layers.back().name, "output");
    EXPECT_NEAR(stage.tp_s, 4 * p.comm.dense.tp_s * static_cast<double>(stage_layers * p.shape.micro_batches),
                1e-12 * stage.tp_s);
  }
}

TEST(TrainPhases, ExpertLayersPayTheirAllToAllsDenseLayersDoNot) {
  const auto t = nodes("dgx-h100", 1);
  TrainingContext cache(t);
  const auto m = library_model("mixtral-8x7b");
  TrainOptions o = layout(1, 1, 8, 1, 8);
  o.layout.ep = 8;
  const UpToCollectives p = up_to_collectives(cache, m, o);
  ASSERT_NE(p.groups.ep, nullptr);
  EXPECT_EQ(p.groups.ep->ranks(), 8);
  EXPECT_GT(p.comm.expert.ep.forward_s, 0.0);
  EXPECT_GT(p.comm.expert.ep.backward_s, 0.0);
  EXPECT_EQ(p.comm.dense.ep.forward_s, 0.0);  // Mixtral's layers are all MoE; a dense one sends nothing
}

TEST(TrainPhases, TpCommOverlapOnlyWhereNvlinkJoinsTheGroup) {
  const auto m = library_model("llama3.1-8b");
  for (const char* name : {"dgx-h100", "pcie-8x-a100"}) {
    const auto t = nodes(name, 1);
    TrainingContext cache(t);
    TrainOptions o = layout(2, 1, 4, 1, 4);
    o.layout.sequence_parallel = true;
    o.layout.tp_comm_overlap = true;
    const UpToCollectives p = up_to_collectives(cache, m, o);
    const bool nvlink = std::string(name) == "dgx-h100";
    EXPECT_EQ(p.comm.tp_overlap, nvlink) << name;
    EXPECT_EQ(p.comm.assumptions.empty(), nvlink) << name;  // the PCIe server says the flag did nothing
  }
}

TEST(TrainPhases, PipelineBubbleIsTheFillAndDrainOfOneStage) {
  const auto t = nodes("dgx-h100", 1);
  TrainingContext cache(t);
  const auto layers = uniform_layers();
  const std::string dtype = "bfloat16";
  const PipelineSend none;
  TrainOptions o = layout(1, 1, 8, 1, 8);
  const PipelineSchedule flat =
      pipeline_schedule(cache, {o.layout, o.order, o.placement, layers, 8, false, none, dtype, false, true});
  EXPECT_EQ(flat.bubble_s, 0.0);
  EXPECT_EQ(flat.p2p_s, 0.0);
  EXPECT_TRUE(flat.events.empty());
  EXPECT_TRUE(flat.assumptions.empty());
  o = layout(1, 4, 2, 1, 16);
  const PipelineSchedule piped =
      pipeline_schedule(cache, {o.layout, o.order, o.placement, layers, 8, false, none, dtype, false, true});
  // (stages - 1) x (forward + backward): 3 x 24 ms.
  EXPECT_NEAR(piped.bubble_s, 3 * 24e-3, 1e-12);
  EXPECT_EQ(piped.p2p_s, 0.0);  // sends that take no time
  EXPECT_FALSE(piped.events.empty());
  ASSERT_EQ(piped.assumptions.size(), 1U);
  EXPECT_NE(piped.assumptions[0].find("1F1B"), std::string::npos);
}

TEST(TrainPhases, PipelineSendCrossesTheSlowestBoundary) {
  const auto t = nodes("dgx-h100", 2);
  TrainingContext cache(t);
  const TrainOptions o = layout(8, 2, 1, 1, 2);  // one stage per node
  const std::string dtype = "bfloat16";
  const PipelineSend send =
      price_pipeline_send(cache, {o.layout, o.order, o.placement, 4096, 4096, Precision::bf16, nullptr, dtype});
  EXPECT_EQ(send.bytes, 4096.0 * 4096 * 2 / 8);  // 1/TP of a micro-batch's activations
  ASSERT_NE(send.boundaries, nullptr);
  ASSERT_FALSE(send.boundaries->slowest.empty());
  EXPECT_EQ(send.boundaries->slowest.front(), (std::vector<long>{0, 8}));  // GPU 0 to its peer on node 1
  EXPECT_GT(send.send_s, 0.0);
  EXPECT_EQ(send.gather_s, 0.0);  // no TP group given: nothing to gather
}

TEST(TrainPhases, DataParallelReductionHalvesInBf16AndIsAbsentWithoutReplicas) {
  const auto t = nodes("dgx-h100", 2);
  TrainingContext cache(t);
  const auto layers = uniform_layers();
  TrainOptions o = layout(1, 1, 1, 1, 1);
  o.gpus = 1;
  const DataParallelStep alone = data_parallel_step(cache, {o, o.memory, layers, 2, 5e-3, 1e9, nullptr});
  EXPECT_NEAR(alone.step.step_s, 2 * 8 * 3e-3 + 5e-3, 1e-12);  // two micro-batches, then the optimizer
  EXPECT_EQ(alone.step.communication_s, 0.0);
  o = layout(1, 1, 16, 1, 16);
  const DataParallelStep fp32 = data_parallel_step(cache, {o, o.memory, layers, 1, 5e-3, 1e9, nullptr});
  o.memory.grad_reduce_bf16 = true;
  const DataParallelStep bf16 = data_parallel_step(cache, {o, o.memory, layers, 1, 5e-3, 1e9, nullptr});
  EXPECT_FALSE(fp32.reduce_scatter);
  EXPECT_GT(fp32.step.communication_s, 0.0);
  EXPECT_LT(bf16.step.communication_s, 0.75 * fp32.step.communication_s);
  ASSERT_FALSE(bf16.assumptions.empty());
  EXPECT_EQ(bf16.assumptions.front(), "gradients reduced in bf16");
  o.memory.grad_reduce_bf16 = false;
  o.memory.distributed_optimizer = true;
  EXPECT_TRUE(data_parallel_step(cache, {o, o.memory, layers, 1, 5e-3, 1e9, nullptr}).reduce_scatter);
}

TEST(TrainPhases, InputStallIsTheBusiestNodesLoadBeyondTheStep) {
  PipelineResult input;
  auto stage = [](const char* name, double loaded) {
    StageResult s;
    s.name = name;
    s.loaded = loaded;
    return s;
  };
  input.stages = {stage("storage read", 100), stage("GPU compute", 1), stage("CPU decode", 200)};
  ParallelLayout l;
  l.dp = 16;
  const RankOrder order;
  const std::vector<long> placement;
  const std::string name = "test";
  // Eight replicas per node, 10 samples each: 80 samples at 100/s (the GPUs' own stage is not a loader).
  input.overlapped = true;
  const InputStall beside = input_stall({input, name, l, order, placement, 8, 160, 0.5});
  EXPECT_NEAR(beside.stall_s, 0.3, 1e-12);
  ASSERT_EQ(beside.assumptions.size(), 1U);
  EXPECT_NE(beside.assumptions[0].find("storage read limits it"), std::string::npos);
  input.overlapped = false;
  EXPECT_NEAR(input_stall({input, name, l, order, placement, 8, 160, 0.5}).stall_s, 0.8, 1e-12);
}

}  // namespace
}  // namespace gf::work
