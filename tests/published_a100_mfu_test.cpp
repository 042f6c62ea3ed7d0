// The highest published A100 MFUs (Aleph Alpha's DGX A100 layout sweep, Hagemann et al. 2023;
// data/validation/training_hagemann.yaml) against the model, and the planner's A100 candidate
// read against them (issue 35: "the planner's A100 candidates reach 69-77% MFU, above any
// published A100 run").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "validate/training_validation.hpp"

namespace {

std::vector<gf::validate::TrainingCheck> sweep_rows() {
  std::vector<gf::validate::TrainingCheck> out;
  for (auto& c : gf::validate::check_training(gf::test::catalog()))
    if (c.source_id == "hagemann-2023") out.push_back(std::move(c));
  return out;
}

bool data_parallel_only(const std::string& id) { return id.find("-tp1-pp1") != std::string::npos; }

// Every row of the sweep runs through the model (none skipped) and is scored as MFU.
TEST(PublishedA100Mfu, EveryRowOfTheSweepIsScored) {
  const auto rows = sweep_rows();
  ASSERT_EQ(rows.size(), 9u);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.skipped.empty()) << r.id << ": " << r.skipped;
    EXPECT_EQ(r.metric, "MFU") << r.id;
    EXPECT_EQ(r.gpu, "a100-sxm4-80gb") << r.id;
  }
}

// Without tensor or pipeline parallelism a tuned A100 stack reaches 70% MFU (13B on 64 GPUs):
// the model's A100 compute ceiling (GEMMs at the sustained 257 TFLOP/s, FlashAttention-2 at its
// A100 curves, fused element-wise kernels) stays within 10% of it, on the optimistic side.
TEST(PublishedA100Mfu, DataParallelRowsSitNearTheModelsComputeCeiling) {
  long seen = 0;
  for (const auto& r : sweep_rows()) {
    if (!data_parallel_only(r.id)) continue;
    ++seen;
    EXPECT_GT(r.measured, 0.69) << r.id;  // above the 55-60% the issue took for the A100 ceiling
    EXPECT_GT(r.error, 0.0) << r.id;
    EXPECT_LT(r.error, 0.10) << r.id;
  }
  EXPECT_EQ(seen, 2);
}

// Under tensor and pipeline parallelism the same stack reaches 51-63%, and the model over-predicts
// it by 14-25% at the time of writing (the model's relative cost of PP2 on 13B is 2%, the sweep's
// 15%; of TP2 8% against 15%). The bound keeps that known optimism from growing; a fix of the
// cause may shrink it to either side.
TEST(PublishedA100Mfu, ModelParallelRowsStayInsideTheKnownBound) {
  for (const auto& r : sweep_rows()) {
    if (data_parallel_only(r.id)) continue;
    EXPECT_LT(r.measured, 0.64) << r.id;
    EXPECT_GT(r.error, -0.15) << r.id;
    EXPECT_LT(r.error, 0.30) << r.id;
  }
}

}  // namespace
