// Megatron-Core's pipeline split rules, MoE parallel folding, the all-to-all overlap schedules and
// grouped expert GEMMs.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "test_support.hpp"
#include "work/model_library.hpp"
#include "work/moe_gemm.hpp"
#include "work/moe_overlap.hpp"
#include "work/parallel_layout.hpp"
#include "work/pipeline_split.hpp"
#include "work/pp_schedule.hpp"
#include "work/train_step.hpp"

namespace gf::work {
namespace {

PipelineSplitRequest request(long layers, long pp, long vpp = 1, bool overlap = true) {
  PipelineSplitRequest r;
  r.layers = layers;
  r.pp = pp;
  r.vpp = vpp;
  r.overlap_p2p = overlap;
  return r;
}

TEST(PipelineSplit, RefusesWhatMegatronRefuses) {
  // --vpp that does not divide the layers per stage: 96 layers, PP 8 -> 12 a stage, VPP 5.
  EXPECT_THROW(pipeline_split(request(96, 8, 5)), InputError);
  EXPECT_NO_THROW(pipeline_split(request(96, 8, 4)));
  // 256 virtual stages on 126 layers.
  EXPECT_THROW(pipeline_split(request(126, 16, 16)), InputError);
  // Layers that do not divide by PP, without uneven edges.
  EXPECT_THROW(pipeline_split(request(61, 16)), InputError);
  // The interleaved schedule with blocking sends needs PP > 2.
  EXPECT_THROW(pipeline_split(request(48, 2, 2, false)), InputError);
  EXPECT_NO_THROW(pipeline_split(request(48, 2, 2, true)));
}

TEST(PipelineSplit, TheErrorSaysWhatWouldBeValid) {
  try {
    pipeline_split(request(61, 16));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--first-stage-layers"), std::string::npos) << e.what();
  }
}

TEST(PipelineSplit, UnevenEdgesFollowMegatronsRules) {
  auto r = request(61, 16);
  r.first_stage_layers = 4;
  r.last_stage_layers = 1;  // Megatron-Bridge's DeepSeek-V3 split for PP 16
  const auto s = pipeline_split(r);
  EXPECT_EQ(s.stage_layers(0).size(), 4u);
  EXPECT_EQ(s.stage_layers(15), (std::vector<long>{60}));
  EXPECT_EQ(s.most_layers(), 4);
  r.last_stage_layers = 2;  // 55 middle layers over 14 stages: refused
  EXPECT_THROW(pipeline_split(r), InputError);
  const auto [f, l] = balanced_edges(61, 16, 1);
  EXPECT_EQ(f + l, 5);
  EXPECT_LE(std::max(f, l), 4);
}

TEST(PipelineSplit, AccountingForEmbeddingAndLossMakes126LayersSplit) {
  auto r = request(126, 8, 8);
  EXPECT_THROW(pipeline_split(r), InputError);
  r.account_for_embedding = r.account_for_loss = true;  // 128 over 8 x 8
  const auto s = pipeline_split(r);
  EXPECT_EQ(s.virtual_layers.front(), 1);
  EXPECT_EQ(s.virtual_layers.back(), 1);
  EXPECT_EQ(s.stage_layers(0).size(), 15u);
  EXPECT_EQ(s.stage_layers(3).size(), 16u);
}

TEST(PipelineSplit, LayoutStringPlacesEveryVirtualStage) {
  auto r = request(61, 8, 4);
  EXPECT_THROW(pipeline_split(r), InputError);  // no even or first/last split exists
  r.layout = "Et|(tt|)*30mL";
  const auto s = pipeline_split(r);
  ASSERT_EQ(s.virtual_layers.size(), 32u);
  EXPECT_EQ(s.stage_layers(0).size(), 7u);  // E t, then three chunks of two
  EXPECT_EQ(s.stage_layers(7).size(), 6u);  // the last chunk holds only MTP and the loss
  EXPECT_EQ(s.most_layers(), 8);
  r.layout = "Et|(tt|)*29mL";  // 31 stages
  EXPECT_THROW(pipeline_split(r), InputError);
  r.layout = "Et|(tt|)*30mLx";
  EXPECT_THROW(pipeline_split(r), InputError);
}

TEST(PipelineSplit, BalancedSplitIsTorchtitans) {
  auto r = request(126, 8, 2);
  r.balanced = true;
  const auto s = pipeline_split(r);
  EXPECT_EQ(s.most_layers(), 16);
}

TEST(ParallelLayout, MoeParallelFoldingLetsEpSpanTpAndDp) {
  ParallelLayout l;
  l.tp = 2;
  l.pp = 8;
  l.dp = 16;
  l.ep = 32;
  EXPECT_THROW(check_expert_grid(l, 256), InputError);  // ETP defaults to TP: 2 x 32 x 8 > 256
  l.etp = 1;
  EXPECT_NO_THROW(check_expert_grid(l, 256));
  const RankOrder o;
  // The EP group is 32 consecutive ranks, across the TP pairs and the DP ranks of stage 0.
  const auto ep = group_of(l, o, Axis::ep, 0);
  ASSERT_EQ(ep.size(), 32u);
  EXPECT_EQ(ep.front(), 0);
  EXPECT_EQ(ep.back(), 31);
  // The attention side is unchanged: DP strides over TP.
  EXPECT_EQ(group_of(l, o, Axis::dp, 0).size(), 16u);
  EXPECT_EQ(group_of(l, o, Axis::dp, 0)[1], 2);
}

TEST(MoeOverlap, SchedulesHideWhatTheyPublish) {
  const MoePass f{1.0, 3.0, 0.5}, b{1.0, 6.0, 1.0};
  const auto none = exposed_all_to_all(MoeOverlap::none, f, b, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(none.forward_s + none.backward_s, 4.0);
  const auto shared = exposed_all_to_all(MoeOverlap::shared_expert, f, b, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(shared.forward_s, 1.5);
  EXPECT_DOUBLE_EQ(shared.backward_s, 1.0);
  // Merged passes: 4 s of all-to-alls under 9 s of compute hide entirely when every micro-batch
  // is paired, half of them when half are.
  EXPECT_DOUBLE_EQ(exposed_all_to_all(MoeOverlap::ep_a2a, f, b, 1.0, 0.0).forward_s, 0.0);
  const auto half = exposed_all_to_all(MoeOverlap::ep_a2a, f, b, 0.5, 0.0);
  EXPECT_DOUBLE_EQ(half.forward_s + half.backward_s, 2.0);
  // Hidden communication holds SMs: 4 s hidden at 15% of the SMs cost 0.6 s.
  const auto sm = exposed_all_to_all(MoeOverlap::dualpipe, f, b, 0.0, 0.15);
  EXPECT_NEAR(sm.forward_s + sm.backward_s, 0.6, 1e-12);
  // Slow all-to-alls show what the compute cannot cover.
  const auto slow = exposed_all_to_all(MoeOverlap::dualpipe, {5, 3, 0}, {5, 6, 0}, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(slow.forward_s + slow.backward_s, 11.0);
  EXPECT_EQ(moe_overlap_named("ep-a2a"), MoeOverlap::ep_a2a);
  EXPECT_FALSE(moe_overlap_named("dual-pipe"));
}

TEST(PipelineSchedule, DualPipeBubbleIsTable2s) {
  PipelineShape s{8, 1, 16, false};
  const double f = 1, b = 2;
  EXPECT_DOUBLE_EQ(pipeline_closed_form(s, f, b, 0.1).bubble_s, 7 * 3.0);  // 1F1B: (PP - 1)(F + B)
  s.dualpipe = true;
  const auto c = pipeline_closed_form(s, f, b, 0.1);
  EXPECT_DOUBLE_EQ(c.bubble_s, 3 * (3.0 + 2.0 - 3 * 1.0));  // (PP/2 - 1)(F&B + B - 3W), W = B/2
  EXPECT_DOUBLE_EQ(c.transfers_s, 0.0);
}

TEST(MoeGemm, SmallExpertBatchesPayTheirPartEmptyTiles) {
  const auto catalog = hw::Catalog::builtin();
  const ComputeContext c = resolve_rates({catalog.gpu("h100-sxm5"), Precision::bf16, ComputeEfficiency::builtin()});
  // The same FLOPs as 32 experts of 1024 tokens or 32 of 48: the small ones waste 80 of 128 rows.
  const double big = grouped_gemm_seconds(c, 32, 1024, 4096, 7168) / (32.0 * 1024);
  const double small = grouped_gemm_seconds(c, 32, 48, 4096, 7168) / (32.0 * 48);
  EXPECT_GT(small, 1.5 * big);
  // Expert shape: DeepSeek-V3 on EP 8, ETP 1, 4096 tokens a GPU: 1024 tokens for each of 32 experts.
  ModelSpec m;
  m.moe = MoeSpec{256, 8, 1, 2048, 3, 1.0};
  ParallelLayout l;
  l.ep = 8;
  const auto s = expert_gemm_shape(m, l, 4096);
  EXPECT_DOUBLE_EQ(s.groups, 32);
  EXPECT_DOUBLE_EQ(s.tokens, 1024);
  EXPECT_DOUBLE_EQ(s.width, 2048);
}

// The step model applies them: the merged schedules hide all-to-all time none leaves exposed,
// a folded EP runs where Megatron would run it, and the slowest stage of an uneven split paces
// the pipeline.
TEST(MoeStep, OverlapFoldingAndTheSlowestStageReachTheStep) {
  topo::ClusterOverrides two;
  two.nodes = 4;
  const auto t = gf::test::preset("dgx-h100", two);
  ModelSpec m = library_model("deepseek-v3");
  m.layers = 8;  // 8 layers (3 dense), to keep it small
  TrainOptions o;
  o.layout.tp = 2;
  o.layout.pp = 2;
  o.layout.dp = 8;
  o.layout.ep = 16;  // 2 x 16 x 2 > 32 GPUs with ETP = TP ...
  o.layout.sequence_parallel = true;
  o.global_batch = 64;
  o.memory.recompute = Recompute::full;
  EXPECT_THROW(train_step(t, m, o), InputError);
  o.layout.etp = 1;  // ... and folds over TP x DP with ETP 1
  const auto none = train_step(t, m, o);
  o.moe_overlap = MoeOverlap::dualpipe;
  const auto dual = train_step(t, m, o);
  EXPECT_LT(dual.breakdown.ep_s, none.breakdown.ep_s);
  EXPECT_LT(dual.breakdown.pp_bubble_s, none.breakdown.pp_bubble_s);
  o.moe_overlap = MoeOverlap::ep_a2a;  // needs VPP with PP and no full recomputation
  EXPECT_THROW(train_step(t, m, o), InputError);
  o.moe_overlap = MoeOverlap::none;
  // 8 layers as 2 + 6: the second stage's six layers pace the step, more than an even 4 + 4.
  o.layout.split.first_stage_layers = 2;
  o.layout.split.last_stage_layers = 6;
  const auto uneven = train_step(t, m, o);
  EXPECT_GT(uneven.breakdown.compute_s, 1.2 * none.breakdown.compute_s);
  EXPECT_GT(uneven.breakdown.pp_bubble_s, none.breakdown.pp_bubble_s);
}

}  // namespace
}  // namespace gf::work
