// `gpufabric train` as a user runs it, and the seeds' data-parallel cases from the model.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

using gf::test::run_cli;

namespace {

nlohmann::json train(std::vector<std::string> args) {
  args.insert(args.begin(), "train");
  args.push_back("--format");
  args.push_back("json");
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

double efficiency_at_16(std::vector<std::string> args) {
  args.insert(args.end(), {"--model", "bert-large", "--micro-batch", "32", "--scale", "1,16"});
  const auto j = train(args);
  return j["scaling"][1]["efficiency"].get<double>();
}

// Seeds' case 2 and 3: 16 NVLink servers over InfiniBand with GPUDirect run about 14x one
// server or better (NVIDIA measures BERT-large at 96.9% on 16 DGX A100, in
// data/validation/training.yaml); the same servers over 25 GbE TCP without GPUDirect fall to
// about 70%.
TEST(TrainCases, NvlinkAndRdmaScaleAndCheapTcpDoesNot) {
  const double ib = efficiency_at_16({"--preset", "dgx-a100", "--network", "ib-hdr"});
  const double tcp = efficiency_at_16({"--preset", "dgx-a100", "--network", "eth-25g", "--gpudirect", "off"});
  EXPECT_GT(ib, 0.85);
  EXPECT_LT(tcp, 0.85);
  EXPECT_GT(tcp, 0.5);
  EXPECT_GT(ib - tcp, 0.15);
}

// Seeds' case 6: over gigabit Ethernet gradient synchronisation dominates, and the output
// says so with its share of the step.
TEST(TrainCases, GigabitEthernetIsDominatedByGradientSynchronisation) {
  const auto j = train(
      {"--preset", "dgx-a100", "--nodes", "4", "--network", "eth-1g", "--model", "bert-large", "--micro-batch", "32"});
  const double step = j["step_time_s"].get<double>();
  EXPECT_GT(j["breakdown"]["dp_exposed"].get<double>() / step, 0.8);
  EXPECT_NE(j["bottleneck"].get<std::string>().find("gradient synchronisation"), std::string::npos);
}

TEST(Train, ReportsWhatTheIssueAsksFor) {
  const auto j = train({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--tp", "2", "--sequence-parallel",
                        "--recompute", "selective", "--global-batch", "64"});
  for (const char* k : {"step_time_s", "tokens_per_s", "samples_per_s", "tflops_per_gpu", "model_tflops_per_gpu", "mfu",
                        "hfu", "memory_per_gpu_GiB", "fits", "breakdown", "bottleneck"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_GT(j["mfu"].get<double>(), 0.1);
  EXPECT_LT(j["mfu"].get<double>(), 1.0);
  EXPECT_GT(j["breakdown"]["tp_communication"].get<double>(), 0.0);
  EXPECT_GE(j["hfu"].get<double>(), j["mfu"].get<double>());
}

TEST(Train, BadLayoutsAndModelsAreExitTwo) {
  auto code = [](std::vector<std::string> args) {
    args.insert(args.begin(), "train");
    return run_cli(args).code;
  };
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama9"}), 2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--tp", "3"}), 2);  // does not divide 8 GPUs
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "gpt3-1.3b", "--tp", "8", "--heads", "12"}), 2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "12"}), 2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--cp", "2"}), 2);  // not modelled yet: said
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "resnet-50", "--pp", "2"}), 2);    // no layers to stage
  EXPECT_EQ(
      code({"--preset", "dgx-h100", "--layers", "2", "--hidden", "100", "--heads", "3", "--seq", "8", "--vocab", "10"}),
      2);
  EXPECT_EQ(code({"--preset", "dgx-h100"}), 2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--gpus", "12"}), 2);  // one node of 8
  EXPECT_EQ(code({"--preset", "dgx-h100", "--nodes", "2", "--model", "llama3.1-8b", "--gpus", "12"}), 2);  // 1.5 nodes
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--gpus", "4", "--tp", "4", "--global-batch", "8"}),
            0);
}

}  // namespace

#include "validate/training_validation.hpp"

namespace {

// The training suite runs every row the model covers and says why it skips the rest. Issue 11's
// 15% target is not met (43.2% over 103 rows at the time of writing: PyTorch FSDP stacks and
// small LLMs are predicted 20-95% fast, ResNet-50 up to 2.4x); this bound only keeps it from
// getting worse.
TEST(TrainingValidation, EvaluatesTheRowsItCoversAndNamesTheRest) {
  const auto checks = gf::validate::check_training(gf::test::catalog());
  ASSERT_GE(checks.size(), 100u);
  long evaluated = 0;
  double sum = 0;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) continue;
    ++evaluated;
    sum += std::fabs(c.error);
    EXPECT_GT(c.predicted, 0) << c.id;
  }
  EXPECT_GE(evaluated, 100);
  EXPECT_LT(sum / static_cast<double>(evaluated), 0.45);
}

}  // namespace
