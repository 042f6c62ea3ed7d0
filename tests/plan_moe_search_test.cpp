// The planner's MoE search (issue 35): expert tensor parallelism on the experts' own grid and the
// all-to-all overlap schedules are searched, Megatron-Core's and DeepSeek's rules for them are kept,
// and a plan file names them at their line when it gets them wrong.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "plan/plan_spec.hpp"
#include "plan/training_search.hpp"
#include "test_support.hpp"
#include "work/model_library.hpp"
#include "work/training_context.hpp"

namespace {

using gf::work::MoeOverlap;

gf::plan::TrainingWorkload mixtral() {
  gf::plan::TrainingWorkload w;
  w.name = "moe";
  w.model = gf::work::library_model("mixtral-8x7b");
  w.model.seq = 4096;
  w.tokens = 1e11;
  w.global_batch = 256;
  return w;
}

// A narrow space (TP 1-2, PP 1-2, EP 4-8) so the test times few layouts.
gf::plan::SearchSpace narrow() {
  gf::plan::SearchSpace s;
  s.tp = {1, 2};
  s.pp = {1, 2};
  s.vpp = {1, 2};
  s.ep = {4, 8};
  s.tp_comm_overlap = {false};
  s.micro_batch = {1};
  s.recompute = {gf::work::Recompute::selective};
  s.sharding = {gf::work::Sharding::zero1};
  return s;
}

gf::plan::LayoutSearch search(const gf::plan::SearchSpace& s) {
  gf::topo::ClusterOverrides four;
  four.nodes = 4;
  const auto t = gf::test::preset("dgx-h100", four);
  gf::work::TrainingContext ctx(t);
  return gf::plan::search_layouts(ctx, mixtral(), s, 32);
}

}  // namespace

TEST(PlanMoeSearch, MoreSchedulesAndExpertGridsNeverMakeTheBestSlower) {
  auto only = narrow();
  only.etp = {1};
  only.moe_overlap = {MoeOverlap::none};
  const auto base = search(only);
  ASSERT_TRUE(base.best.has_value());
  EXPECT_EQ(base.best->moe_overlap, MoeOverlap::none);
  EXPECT_EQ(base.best->layout.etp, 1);

  auto wide = narrow();  // the defaults: ETP 1 and as TP; none and ep-a2a
  const auto all = search(wide);
  ASSERT_TRUE(all.best.has_value());
  EXPECT_GT(all.timed, base.timed);
  EXPECT_LE(all.result.step_s, base.result.step_s);
}

TEST(PlanMoeSearch, EtpAsTpAndEtpEqualToTpAreTimedOnce) {
  auto a = narrow();
  a.tp = {2};
  a.etp = {0};
  a.moe_overlap = {MoeOverlap::none};
  auto b = a;
  b.etp = {0, 2};
  const auto once = search(a);
  EXPECT_GT(once.timed, 0);
  EXPECT_EQ(once.timed, search(b).timed);
}

TEST(PlanMoeSearch, RulesOfTheOverlapSchedulesAreKept) {
  // ep-a2a refuses full recomputation (Megatron-Core's TransformerConfig).
  auto s = narrow();
  s.moe_overlap = {MoeOverlap::ep_a2a};
  s.recompute = {gf::work::Recompute::full};
  const auto refused = search(s);
  EXPECT_FALSE(refused.best.has_value());
  EXPECT_EQ(refused.timed, 0);
  EXPECT_GT(refused.invalid, 0);

  // DualPipe runs an even PP without virtual stages.
  auto d = narrow();
  d.moe_overlap = {MoeOverlap::dualpipe};
  const auto dual = search(d);
  ASSERT_TRUE(dual.best.has_value());
  EXPECT_EQ(dual.best->layout.pp % 2, 0);
  EXPECT_EQ(dual.best->layout.vpp, 1);

  // With PP > 1, ep-a2a needs the interleaved schedule.
  auto e = narrow();
  e.pp = {2};
  e.moe_overlap = {MoeOverlap::ep_a2a};
  const auto a2a = search(e);
  ASSERT_TRUE(a2a.best.has_value());
  EXPECT_GE(a2a.best->layout.vpp, 2);
}

TEST(PlanMoeSearch, TheLayoutLineNamesTheExpertGridAndTheSchedule) {
  auto s = narrow();
  s.moe_overlap = {MoeOverlap::ep_a2a};
  s.pp = {2};
  const auto r = search(s);
  ASSERT_TRUE(r.best.has_value());
  const std::string label = gf::plan::layout_label(*r.best);
  EXPECT_NE(label.find(" EP"), std::string::npos) << label;
  EXPECT_NE(label.find(" ETP"), std::string::npos) << label;
  EXPECT_NE(label.find("ep-a2a"), std::string::npos) << label;
}

TEST(PlanMoeSearch, PlanFileReadsEtpAndOverlapAndRefusesTyposAtTheirLine) {
  const std::string head = R"(name: t
objective: time
workloads:
  - {name: w, kind: training, model: mixtral-8x7b, tokens: 1e9, global_batch: 64}
design:
  nodes: [dgx-h100]
  node_counts: [1]
search:
)";
  const auto p = gf::plan::parse_plan(head + "  etp: [1, tp]\n  moe_overlap: [none, dualpipe]\n", "p.yaml");
  EXPECT_EQ(p.search.etp, (std::vector<long>{1, 0}));
  EXPECT_EQ(p.search.moe_overlap, (std::vector<MoeOverlap>{MoeOverlap::none, MoeOverlap::dualpipe}));
  try {
    gf::plan::parse_plan(head + "  etp: [two]\n", "p.yaml");
    FAIL() << "etp: [two] was accepted";
  } catch (const gf::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tp"), std::string::npos) << e.what();
  }
  try {
    gf::plan::parse_plan(head + "  moe_overlap: [ep_a2a]\n", "p.yaml");
    FAIL() << "moe_overlap: [ep_a2a] was accepted";
  } catch (const gf::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ep-a2a"), std::string::npos) << e.what();
  }
}

// Transformer Engine's userbuffers need CUDA multicast (an NVLink-SHARP NVSwitch) unless UB_SKIPMC=1
// (transformer_engine/pytorch/module/base.py, initialize_ub): the planner does not assume it on a
// DGX A100 unless the plan says the variable is set.
TEST(PlanOverlapSearch, TpOverlapNeedsMulticastOrTheIpcFallback) {
  gf::plan::TrainingWorkload w;
  w.name = "dense";
  w.model = gf::work::library_model("llama3-8b");
  w.tokens = 1e10;
  w.global_batch = 64;
  gf::plan::SearchSpace s;
  s.tp = {8};
  s.pp = {1};
  s.vpp = {1};
  s.micro_batch = {1};
  s.recompute = {gf::work::Recompute::selective};
  s.sharding = {gf::work::Sharding::zero1};
  s.tp_comm_overlap = {true};
  const auto a100 = gf::test::preset("dgx-a100");
  gf::work::TrainingContext on_a100(a100);
  const auto refused = gf::plan::search_layouts(on_a100, w, s, 8);
  EXPECT_FALSE(refused.best.has_value());
  EXPECT_EQ(refused.timed, 0);
  s.tp_comm_overlap_ipc = true;
  const auto ipc = gf::plan::search_layouts(on_a100, w, s, 8);
  ASSERT_TRUE(ipc.best.has_value());
  EXPECT_TRUE(ipc.best->layout.tp_comm_overlap);
  s.tp_comm_overlap_ipc = false;
  const auto h100 = gf::test::preset("dgx-h100");
  gf::work::TrainingContext on_h100(h100);
  const auto multicast = gf::plan::search_layouts(on_h100, w, s, 8);
  ASSERT_TRUE(multicast.best.has_value());
  EXPECT_TRUE(multicast.best->layout.tp_comm_overlap);
}
