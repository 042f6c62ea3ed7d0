// DualPipe's memory (DeepSeek-V3 report, arXiv:2412.19437, Table 2): each rank holds two stages'
// parameters and PP + 1 micro-batches' activations, against 1F1B's one stage and PP.
#include <gtest/gtest.h>

#include "work/model_library.hpp"
#include "work/parallel_layout.hpp"
#include "work/training_memory.hpp"

namespace {

using namespace gf::work;

struct Pair {
  MemoryBreakdown one_f_one_b, dualpipe;
};

Pair both(const ModelSpec& m, long pp, long micro_batches) {
  ParallelLayout l;
  l.pp = pp;
  l.dp = 1;
  MemoryOptions o;
  o.distributed_optimizer = true;
  o.micro_batches = micro_batches;
  Pair p;
  p.one_f_one_b = training_memory(m, l, o);
  o.dualpipe = true;
  p.dualpipe = training_memory(m, l, o);
  return p;
}

}  // namespace

TEST(DualPipeMemory, TwoStagesOfParametersAndOneMoreMicroBatchInFlight) {
  const ModelSpec m = library_model("llama3-70b");  // 80 layers: 10 on each of 8 stages
  const auto p = both(m, 8, 64);
  // A middle rank (stage 3 and its mirror 4) holds two stages' layers: twice the weights of a
  // middle stage of 1F1B. The worst rank of 1F1B may be an end stage (with the embedding or the
  // head), so compare against a middle stage's share: 80/8 layers' worth.
  const double per_stage = p.one_f_one_b.weights;  // the busiest 1F1B stage: one stage's layers (+ an end's)
  EXPECT_GT(p.dualpipe.weights, 1.8 * per_stage * 10.0 / 11.0);
  EXPECT_LT(p.dualpipe.weights, 2.2 * per_stage);
  EXPECT_NEAR(p.dualpipe.optimizer / p.dualpipe.weights, p.one_f_one_b.optimizer / p.one_f_one_b.weights, 1e-9);
  // PP + 1 = 9 micro-batches in flight against the first stage's 8 in 1F1B.
  EXPECT_GT(p.dualpipe.activations, p.one_f_one_b.activations);
  EXPECT_GT(p.dualpipe.total, p.one_f_one_b.total);
  bool said = false;
  for (const auto& a : p.dualpipe.assumptions) said = said || a.find("DualPipe") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(DualPipeMemory, FewMicroBatchesBoundWhatIsInFlight) {
  const ModelSpec m = library_model("llama3-70b");
  // With only 2 micro-batches, neither schedule can hold more than 2 in flight.
  const auto few = both(m, 8, 2);
  const auto many = both(m, 8, 64);
  EXPECT_LT(few.dualpipe.activations, many.dualpipe.activations);
}

TEST(DualPipeMemory, WithoutPipelineNothingChanges) {
  const ModelSpec m = library_model("llama3-8b");
  const auto p = both(m, 1, 8);
  EXPECT_DOUBLE_EQ(p.dualpipe.total, p.one_f_one_b.total);
}
