// `gpufabric train` as a user runs it, and the seeds' data-parallel cases from the model.
#include <gtest/gtest.h>

#include <sstream>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "probe/profile_json.hpp"
#include "scratch_dir.hpp"
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
  // The batch is pinned (32 per GPU of the 1-node run, kept per GPU): the published default would
  // accumulate 128 micro-batches and hide the fabric this test compares.
  args.insert(args.end(), {"--model", "bert-large", "--micro-batch", "32", "--global-batch", "256", "--scale", "1,16"});
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
  // BERT-large's shallow GEMMs (K 1024, attention's K 64) cost their tiles' fixed work, which
  // brought its DGX A100 step to within 11% of NVIDIA's measurement (21% fast before): the
  // longer compute leaves less of the TCP traffic exposed than the seed's 70%.
  EXPECT_LT(tcp, 0.9);
  EXPECT_GT(tcp, 0.5);
  EXPECT_GT(ib - tcp, 0.12);
}

// Seeds' case 6: over gigabit Ethernet gradient synchronisation dominates, and the output
// says so with its share of the step.
TEST(TrainCases, GigabitEthernetIsDominatedByGradientSynchronisation) {
  const auto j =
      train({"--preset", "dgx-a100", "--nodes", "4", "--network", "eth-1g", "--model", "bert-large", "--micro-batch",
             "32", "--global-batch", "1024"});  // one micro-batch per GPU: the published 32768 would amortise the sync
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

// Expert parallelism puts the dispatch and combine all-to-alls in the step, and they cost more
// when the EP group leaves the NVLink domain; context parallelism splits the activations and
// hides its key/value exchange behind the attention inside a node.
TEST(Train, ExpertAndContextParallelism) {
  const auto inside = train({"--preset", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b", "--tp", "2", "--ep",
                             "4", "--global-batch", "32", "--recompute", "full"});
  const auto across = train({"--preset", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b", "--tp", "2", "--ep",
                             "8", "--order", "tp-cp-dp-ep-pp", "--global-batch", "32", "--recompute", "full"});
  EXPECT_GT(inside["breakdown"]["ep_all_to_all"].get<double>(), 0.0);
  EXPECT_GT(across["breakdown"]["ep_all_to_all"].get<double>(), 2 * inside["breakdown"]["ep_all_to_all"].get<double>());
  const auto plain = train({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "8"});
  const auto cp = train({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--cp", "2", "--global-batch", "4"});
  EXPECT_LT(cp["memory_per_gpu_GiB"].get<double>(), plain["memory_per_gpu_GiB"].get<double>());
  EXPECT_LT(cp["breakdown"]["cp_exposed"].get<double>(), 0.01 * cp["step_time_s"].get<double>());
  // Same tokens per step on the same 8 GPUs: CP 2 x DP 4 does the DP 8 job at nearly its pace.
  EXPECT_NEAR(cp["tokens_per_s"].get<double>() / plain["tokens_per_s"].get<double>(), 1.0, 0.15);
}

// The printed layout names every parallel dimension given: EP (on the experts' own grid, so the
// GPU count stays TP x PP x DP x CP; ETP defaults to TP) and the virtual stages were dropped from
// it (issue 35).
TEST(Train, TheLayoutLineNamesExpertParallelismAndVirtualStages) {
  const auto moe = run_cli({"train", "--preset", "dgx-h100", "--nodes", "2", "--model", "mixtral-8x7b", "--tp", "2",
                            "--ep", "4", "--global-batch", "32", "--recompute", "full"});
  ASSERT_EQ(moe.code, 0) << moe.err;
  EXPECT_NE(moe.out.find("# layout: TP 2 x PP 1 x DP 8 x CP 1 on 16 GPUs, EP 4 x ETP 2 (the experts' own grid)"),
            std::string::npos)
      << moe.out;
  const auto vpp = run_cli({"train", "--preset", "dgx-h100", "--nodes", "2", "--model", "llama3.1-8b", "--pp", "4",
                            "--vpp", "2", "--global-batch", "64"});
  ASSERT_EQ(vpp.code, 0) << vpp.err;
  EXPECT_NE(vpp.out.find("on 16 GPUs, VPP 2"), std::string::npos) << vpp.out;
  const auto dense = run_cli({"train", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "8"});
  EXPECT_EQ(dense.out.find("EP "), std::string::npos) << dense.out;
}

// --trace writes one step as a Chrome trace: the compute stream and each collective stream as
// named tracks, spans that fit in the step and end where it ends.
TEST(Train, TraceIsOneStepOnNamedTracks) {
  namespace fs = std::filesystem;
  const gf::test::ScratchDir dir;
  const fs::path file = dir.file("train-trace.json");
  for (const char* sharding : {"--distributed-optimizer", "--fsdp=full"}) {
    const auto j = train({"--preset", "dgx-h100", "--nodes", "2", "--model", "llama3.1-8b", "--tp", "2",
                          "--global-batch", "16", sharding, "--trace", file.string()});
    std::ifstream in(file);
    const auto trace = nlohmann::json::parse(in);
    std::map<int, std::string> tracks;
    double end = 0;
    double compute = 0;
    for (const auto& e : trace["traceEvents"]) {
      if (e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
      if (e["ph"] != "X") continue;
      const double ts = e["ts"].get<double>() / 1e6;
      const double dur = e["dur"].get<double>() / 1e6;
      EXPECT_GE(ts, 0.0);
      EXPECT_GT(dur, 0.0);
      end = std::max(end, ts + dur);
      if (tracks[e["tid"].get<int>()] == "compute stream") compute += dur;
    }
    const double step = j["step_time_s"].get<double>();
    SCOPED_TRACE(sharding);
    EXPECT_NEAR(end / step, 1.0, 1e-6);
    EXPECT_LE(compute, step * (1 + 1e-9));
    EXPECT_GT(compute, 0.5 * step);
    std::set<std::string> names;
    for (const auto& [tid, name] : tracks) names.insert(name);
    EXPECT_TRUE(names.count("NCCL stream: gradient reduction"));
    EXPECT_TRUE(names.count("NCCL stream: parameter all-gather"));
    EXPECT_TRUE(names.count("in-line collectives (TP, EP, CP)"));
  }
  // With pipeline stages: each stage's forwards and backwards in the schedule's order, and the
  // sends across each boundary, inside the step.
  const auto j = train({"--preset", "dgx-h100", "--nodes", "4", "--model", "llama3.1-8b", "--tp", "8", "--pp", "4",
                        "--vpp", "2", "--global-batch", "8", "--trace", file.string()});
  std::ifstream in(file);
  const auto trace = nlohmann::json::parse(in);
  std::map<int, std::string> tracks;
  std::map<std::string, int> spans;
  double end = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] != "X") continue;
    ++spans[tracks[e["tid"].get<int>()]];
    end = std::max(end, (e["ts"].get<double>() + e["dur"].get<double>()) / 1e6);
  }
  EXPECT_LE(end, j["step_time_s"].get<double>() * (1 + 1e-9));
  for (int s = 0; s < 4; ++s)
    EXPECT_EQ(spans["pipeline stage " + std::to_string(s)], 2 * 8 * 2);  // 8 micro-batches x 2 chunks
  EXPECT_EQ(spans["stage 0 -> 1 sends"], 2 * 8 * 2);                     // both ways, both chunks
  EXPECT_EQ(spans["stage 3 -> 0 sends"], 2 * 8);                         // the chunk hand-back, both ways
}

// Another job on the leftover nodes (an all-to-all back to back, as an expert-parallel job
// runs) shares the oversubscribed leaves' uplinks with this job's gradient reductions: they
// take longer, and so does the step when they are exposed (a slow network, little compute).
TEST(Train, BackgroundJobSharesTheFabric) {
  const std::vector<std::string> job{
      "--preset",  "dgx-h100",  "--nodes", "16", "--fabric", "fat-tree",  "--oversubscription", "8",
      "--network", "roce-100g", "--gpus",  "64", "--model",  "gpt3-1.3b", "--global-batch",     "64"};
  const auto alone = train(job);
  auto with = job;
  with.insert(with.end(), {"--background", "alltoall:1G"});
  const auto shared = train(with);
  EXPECT_GT(shared["step_time_s"].get<double>(), 1.02 * alone["step_time_s"].get<double>());
  EXPECT_GT(shared["breakdown"]["dp_exposed"].get<double>(), alone["breakdown"]["dp_exposed"].get<double>());
}

// Megatron's TP communication overlap hides the all-gathers and reduce-scatters under the GEMMs:
// less of them is left in the critical path, never more. Not all: the last reduce-scatter chunk
// and the 16 SMs its kernel keeps from the GEMM stay (Transformer Engine's defaults).
TEST(Train, TensorParallelOverlapHidesCollectivesUnderGemms) {
  const std::vector<std::string> job{
      "--preset", "dgx-h100", "--model", "gpt3-175b",           "--nodes",        "8",  "--tp",
      "8",        "--pp",     "8",       "--sequence-parallel", "--global-batch", "64", "--recompute",
      "full"};
  const auto plain = train(job);
  auto with = job;
  with.push_back("--tp-comm-overlap");
  const auto overlapped = train(with);
  EXPECT_LT(overlapped["breakdown"]["tp_communication"].get<double>(),
            0.6 * plain["breakdown"]["tp_communication"].get<double>());
  EXPECT_LT(overlapped["step_time_s"].get<double>(), plain["step_time_s"].get<double>());
}

// Megatron's data-parallel options on a step whose gradient traffic shows (Llama 3 8B, DP 32 over
// 25 GbE): reducing in bf16 halves the bytes the reductions move; overlapping the distributed
// optimizer's parameter all-gathers with the next forward takes them out of the step's tail.
TEST(Train, MegatronDataParallelOptions) {
  const std::vector<std::string> job{"--preset",       "dgx-h100", "--nodes",       "4",    "--network",
                                     "eth-25g",        "--model",  "llama3-8b",     "--dp", "32",
                                     "--global-batch", "64",       "--micro-batch", "1",    "--distributed-optimizer"};
  const auto fp32 = train(job);
  auto bf16_args = job;
  bf16_args.push_back("--grad-reduce-in-bf16");
  const auto bf16 = train(bf16_args);
  const double reduced = fp32["breakdown"]["dp_exposed"].get<double>();
  EXPECT_GT(reduced, 0.0);
  EXPECT_LT(bf16["breakdown"]["dp_exposed"].get<double>(), reduced);
  EXPECT_LT(bf16["step_time_s"].get<double>(), fp32["step_time_s"].get<double>());
  auto overlap_args = job;
  overlap_args.push_back("--overlap-param-gather");
  const auto overlapped = train(overlap_args);
  EXPECT_LT(overlapped["step_time_s"].get<double>(), fp32["step_time_s"].get<double>());
  // The compute is the same; only where the gathers sit changed.
  EXPECT_NEAR(overlapped["breakdown"]["compute"].get<double>(), fp32["breakdown"]["compute"].get<double>(),
              1e-12 * fp32["breakdown"]["compute"].get<double>());
}

// PyTorch eager runs each element-wise operator as its own kernel: Llama 3.1 8B under FSDP on
// one H100 server trains slower than with the kernels fused, by about what torchtitan measured
// between eager and torch.compile (5,762 against 6,667 tokens/s per GPU, 0.86; its Table 1, in
// data/validation/training.yaml) and not by a factor. Per-op selective recomputation sits
// between none and full, and counts its recomputed matmuls as hardware FLOPs only.
TEST(Train, EagerKernelsAndPerOpRecomputation) {
  const std::vector<std::string> job{"--preset",       "dgx-h100", "--model",     "llama3.1-8b",   "--fsdp",
                                     "full",           "--dp",     "8",           "--micro-batch", "2",
                                     "--global-batch", "16",       "--attention", "flash2"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = job;
    args.insert(args.end(), extra.begin(), extra.end());
    return train(args);
  };
  const auto fused = with({"--recompute", "selective-op"});
  const auto eager = with({"--recompute", "selective-op", "--kernels", "eager"});
  const double ratio = eager["tokens_per_s"].get<double>() / fused["tokens_per_s"].get<double>();
  EXPECT_GT(ratio, 0.70);
  EXPECT_LT(ratio, 0.95);

  const auto none = with({"--recompute", "none"});
  const auto full = with({"--recompute", "full"});
  EXPECT_LT(none["step_time_s"].get<double>(), fused["step_time_s"].get<double>());
  EXPECT_LT(fused["step_time_s"].get<double>(), full["step_time_s"].get<double>());
  EXPECT_DOUBLE_EQ(fused["model_tflops_per_gpu"].get<double>() * fused["step_time_s"].get<double>(),
                   none["model_tflops_per_gpu"].get<double>() * none["step_time_s"].get<double>());
  EXPECT_GT(fused["hfu"].get<double>(), fused["mfu"].get<double>());

  const auto r = run_cli({"train", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--kernels", "compiled"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--kernels"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fused, eager"), std::string::npos) << r.err;
}

// FP8 doubles the GEMMs' peak but not the step: the attention core stays in 16 bits and every
// linear layer casts its input and its output gradient to FP8 through HBM. torchtitan measured
// 1.28x for Llama 3.1 8B on 8 H100s (torch.compile, 6,667 -> 8,532 tokens/s per GPU, its Table
// 1); the model's gain stays well under 2x.
TEST(Train, Fp8GainsLessThanItsPeak) {
  const std::vector<std::string> job{"--preset",       "dgx-h100", "--model",     "llama3.1-8b",   "--fsdp",
                                     "full",           "--dp",     "8",           "--micro-batch", "2",
                                     "--global-batch", "16",       "--attention", "flash2"};
  auto with = [&](const char* precision) {
    auto args = job;
    args.insert(args.end(), {"--precision", precision});
    return train(args)["tokens_per_s"].get<double>();
  };
  const double gain = with("fp8") / with("bf16");
  EXPECT_GT(gain, 1.1);
  EXPECT_LT(gain, 1.6);
}

// A profile saved by `probe --save` with a measured GEMM rate replaces the published ceiling: a
// GPU measured at half the rate trains slower, and the output says where the figure came from.
TEST(Train, ComputeProfileReplacesThePublishedGemmCeiling) {
  namespace fs = std::filesystem;
  const gf::test::ScratchDir dir;
  const fs::path file = dir.file("compute-profile.json");
  auto save = [&](double tflops) {
    gf::probe::Profile p;
    p.gpu.emplace();
    gf::probe::CopyCurve c;
    c.direction = "d2d";
    c.memory = "device";
    c.points = {{gf::Bytes(1 << 30), gf::Bandwidth(1.5e12)}};
    p.gpu->copies.push_back(c);
    p.gpu->gemms.push_back({0, "bf16", 8192, 8192, 8192, tflops});
    std::ofstream(file) << gf::probe::profile_to_json(p).dump(2);
    const auto back = gf::probe::profile_from_json(gf::probe::profile_to_json(p).dump(), "p.json");
    EXPECT_EQ(back.gpu->gemms.size(), 1U);
  };
  const std::vector<std::string> job{"--preset", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "8"};
  const auto published = train(job);
  auto measured_job = job;
  measured_job.insert(measured_job.end(), {"--compute-profile", file.string()});
  save(400);
  const auto slow = train(measured_job);
  save(760);
  const auto fast = train(measured_job);
  EXPECT_GT(slow["step_time_s"].get<double>(), 1.3 * fast["step_time_s"].get<double>());
  EXPECT_NEAR(fast["step_time_s"].get<double>() / published["step_time_s"].get<double>(), 1.0, 0.1);
  bool said = false;
  for (const auto& a : slow["assumptions"])
    said = said || a.get<std::string>().find("as measured") != std::string::npos;
  EXPECT_TRUE(said);
  save(5000);  // above the H100's peak: measured on another GPU
  measured_job.insert(measured_job.begin(), "train");
  EXPECT_EQ(run_cli(measured_job).code, 2);
  auto fp32 = measured_job;
  fp32.insert(fp32.end(), {"--precision", "fp32"});
  save(400);
  EXPECT_EQ(run_cli(fp32).code, 2);  // no tf32 GEMM in the profile
}

// The seeds' case 7: data loading that cannot keep up leaves the GPUs starving. ResNet-50 at
// 256 images per GPU on a DGX A100 decodes JPEGs on 40 of its cores (5 loader workers per GPU)
// slower than the GPUs consume them: the step waits for the input pipeline, which then sets the
// throughput; decoding on the GPUs' hardware decoder removes the stall.
TEST(Train, InputPipelineThatCannotKeepUpStallsTheStep) {
  const std::vector<std::string> job{"--preset", "dgx-a100", "--model", "resnet-50", "--micro-batch", "256"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = job;
    args.insert(args.end(), extra.begin(), extra.end());
    return train(args);
  };
  const auto alone = with({});
  EXPECT_EQ(alone["breakdown"]["data_stall"].get<double>(), 0.0);
  const auto cpu = with({"--input", "resnet50-imagenet"});
  const auto pipeline =
      run_cli({"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet", "--format", "json"});
  ASSERT_EQ(pipeline.code, 0) << pipeline.err;
  double decode = 0;
  const auto stages = nlohmann::json::parse(pipeline.out)["stages"];
  for (const auto& st : stages)
    if (st["stage"] == "CPU decode") decode = st["loaded_samples_per_s"].get<double>();
  ASSERT_GT(decode, 0.0);
  EXPECT_GT(cpu["breakdown"]["data_stall"].get<double>(), 0.2 * cpu["step_time_s"].get<double>());
  EXPECT_NEAR(cpu["samples_per_s"].get<double>() / decode, 1.0, 1e-6);  // one node: the decode rate
  EXPECT_NE(cpu["bottleneck"].get<std::string>().find("input pipeline"), std::string::npos);
  const auto gpu = with({"--input", "resnet50-imagenet", "--decode", "gpu"});
  EXPECT_EQ(gpu["breakdown"]["data_stall"].get<double>(), 0.0);
  EXPECT_NEAR(gpu["samples_per_s"].get<double>() / alone["samples_per_s"].get<double>(), 1.0, 1e-9);
  // The pipeline's options without a pipeline, and a workload that does not exist.
  EXPECT_EQ(run_cli({"train", "--preset", "dgx-a100", "--model", "resnet-50", "--decode", "gpu"}).code, 2);
  EXPECT_EQ(run_cli({"train", "--preset", "dgx-a100", "--model", "resnet-50", "--input", "imagenet9"}).code, 2);
}

// A layout that does not fit is reported, not refused: by how much, and the single changes that
// would make it fit, each of which does fit when run.
TEST(Train, WhatDoesNotFitSaysByHowMuchAndWhatWouldFit) {
  // Micro-batch 4: at 2 it fits the 79.6 GiB nvidia-smi reports (it did not fit 80 x 10^9 bytes).
  const std::vector<std::string> job{"--preset", "dgx-h100", "--model",       "llama3.1-8b", "--tp",           "4",
                                     "--dp",     "2",        "--micro-batch", "4",           "--global-batch", "64"};
  const auto j = train(job);
  ASSERT_FALSE(j["fits"].get<bool>());
  // Over what nvidia-smi reports for an H100 SXM: 81559 MiB.
  EXPECT_NEAR(j["memory_over_GiB"].get<double>(), j["memory_per_gpu_GiB"].get<double>() - 81559.0 / 1024, 1e-6);
  ASSERT_GE(j["fit_options"].size(), 3u);
  for (const auto& option : j["fit_options"]) {
    auto args = job;
    std::istringstream words(option["change"].get<std::string>());
    for (std::string w; words >> w;) {
      // A flag already given is replaced; a new one is added.
      const auto at = std::find(args.begin(), args.end(), w);
      if (w.rfind("--", 0) == 0 && at != args.end() && at + 1 != args.end() && (at + 1)->rfind("--", 0) != 0 &&
          w != "--sequence-parallel" && w != "--distributed-optimizer") {
        std::string value;
        words >> value;
        *(at + 1) = value;
      } else {
        args.push_back(w);
      }
    }
    const auto fixed = train(args);
    SCOPED_TRACE(option["change"].get<std::string>());
    EXPECT_TRUE(fixed["fits"].get<bool>());
    EXPECT_NEAR(fixed["memory_per_gpu_GiB"].get<double>(), option["memory_per_gpu_GiB"].get<double>(), 1e-6);
  }
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
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--ep", "2"}), 2);   // no experts
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "mixtral-8x7b", "--ep", "3"}), 2);  // does not divide DP 8
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "resnet-50", "--cp", "2"}), 2);     // no sequence
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--attention", "fa9"}), 2);
  // Overlapped pipeline sends without the interleaved schedule.
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--pp", "2", "--overlap-p2p-comm"}), 2);
  // bf16 reductions with full sharding, whose reduce-scatters have their own type.
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--fsdp", "full", "--grad-reduce-in-bf16"}), 2);
  // Overlapped parameter gathers without the distributed optimizer that makes them.
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--overlap-param-gather"}), 2);
  EXPECT_EQ(
      code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--distributed-optimizer", "--overlap-param-gather"}), 0);
  // Interleaving with micro-batches that do not fill whole groups of PP (6 for PP 4).
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--pp", "4", "--vpp", "2", "--dp", "2",
                  "--global-batch", "12"}),
            2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--trace", "/nonexistent-dir/t.json"}), 2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--background", "all_reduce:1G"}),
            2);  // no GPUs left
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--tp", "8", "--tp-comm-overlap"}), 2);  // needs SP
  EXPECT_EQ(code({"--preset", "dgx-h100", "--nodes", "2", "--gpus", "8", "--model", "llama3.1-8b", "--background",
                  "sendrecv:1G"}),
            2);
  EXPECT_EQ(code({"--preset", "dgx-h100", "--model", "resnet-50", "--pp", "2"}), 2);  // no layers to stage
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
// 15% target is not met (40.0% over 116 rows at the time of writing: PyTorch FSDP stacks and
// small LLMs are predicted 20-90% fast, ResNet-50 up to 2.4x); this bound only keeps it from
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
  EXPECT_GE(evaluated, 110);
  EXPECT_LT(sum / static_cast<double>(evaluated), 0.15);  // the issue's target; 12.9% at the time of writing
}

}  // namespace

// BERT pre-training in NVIDIA's code runs its masked-LM head on the masked positions only
// (--head-tokens 0.15): the step is faster than with the head over every token, by less than the
// head's whole cost, and a share outside (0, 1] is refused.
TEST(Train, HeadOnMaskedTokensOnly) {
  const std::vector<std::string> job{"--preset",    "dgx-a100",      "--model",     "bert-large",     "--dp",
                                     "8",           "--micro-batch", "32",          "--global-batch", "256",
                                     "--precision", "fp16",          "--attention", "unfused"};
  const auto all = train(job);
  auto masked_args = job;
  masked_args.insert(masked_args.end(), {"--head-tokens", "0.15"});
  const auto masked = train(masked_args);
  EXPECT_LT(masked["step_time_s"].get<double>(), all["step_time_s"].get<double>());
  EXPECT_GT(masked["step_time_s"].get<double>(), 0.7 * all["step_time_s"].get<double>());
  EXPECT_LT(masked["memory_per_gpu_GiB"].get<double>(), all["memory_per_gpu_GiB"].get<double>());
  for (const char* bad : {"0", "1.5", "-0.1", "x"}) {
    auto args = std::vector<std::string>{"train"};
    args.insert(args.end(), job.begin(), job.end());
    args.insert(args.end(), {"--head-tokens", bad});
    EXPECT_EQ(run_cli(args).code, 2) << bad;
  }
}

// The headline of a scaling curve is the run --nodes asks for, not the curve's first point; its
// figures are the 16-node point's, and the speedup column still counts from the first.
TEST(TrainDefaults, ScaleHeadlineIsTheNodesRun) {
  const auto j = train({"--preset", "dgx-a100", "--nodes", "4", "--model", "bert-large", "--micro-batch", "32",
                        "--global-batch", "1024", "--scale", "1,4"});
  EXPECT_EQ(j["headline_nodes"].get<long>(), 4);
  ASSERT_EQ(j["scaling"].size(), 2U);
  EXPECT_EQ(j["scaling"][1]["nodes"].get<long>(), 4);
  EXPECT_DOUBLE_EQ(j["step_time_s"].get<double>(), j["scaling"][1]["step_time_s"].get<double>());
  EXPECT_NE(j["step_time_s"].get<double>(), j["scaling"][0]["step_time_s"].get<double>());
  // --global-batch is the headline's; weak scaling keeps its 32 per GPU at 1 node.
  EXPECT_EQ(j["scaling"][1]["global_batch"].get<long>(), 1024);
  EXPECT_EQ(j["scaling"][0]["global_batch"].get<long>(), 256);
}

// Without --global-batch a library model steps its published batch (data/models, cited), and
// says so; a model without one steps micro-batch x DP and says that instead.
TEST(TrainDefaults, PublishedGlobalBatchIsTheDefault) {
  const auto bert = train({"--preset", "dgx-a100", "--model", "bert-large", "--micro-batch", "32"});
  EXPECT_EQ(bert["global_batch"].get<long>(), 32768);
  EXPECT_NE(bert["global_batch_from"].get<std::string>().find("DeepLearningExamples"), std::string::npos);
  // With the published batch the optimizer is a small share of the step (one sample per GPU made
  // it 39%).
  EXPECT_LT(bert["breakdown"]["optimizer"].get<double>(), 0.05 * bert["step_time_s"].get<double>());
  // Rounded up to whole micro-batches per DP rank: 32768 over 8 x 24 is not whole.
  const auto odd = train({"--preset", "dgx-a100", "--model", "bert-large", "--micro-batch", "24"});
  EXPECT_EQ(odd["global_batch"].get<long>() % (24 * 8), 0);
  EXPECT_GE(odd["global_batch"].get<long>(), 32768);
  const auto mixtral = train({"--preset", "dgx-h100", "--model", "mixtral-8x7b", "--tp", "2", "--ep", "4"});
  EXPECT_EQ(mixtral["global_batch"].get<long>(), 4);
  EXPECT_NE(mixtral["global_batch_from"].get<std::string>().find("no published batch"), std::string::npos);
}

// --seq retrains a library model at another length, within its context.
TEST(TrainDefaults, SeqWorksWithModel) {
  const auto j = train({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--seq", "2048", "--global-batch", "8"});
  EXPECT_NEAR(j["tokens_per_s"].get<double>() / j["samples_per_s"].get<double>(), 2048, 1e-6);
  const auto r = run_cli({"train", "--preset", "dgx-a100", "--model", "bert-large", "--seq", "1024"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("512"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli({"train", "--preset", "dgx-a100", "--model", "resnet-50", "--seq", "128"}).code, 2);
}

// The memory breakdown names every term and adds up; a layout that does not fit says so before
// anything else and marks its throughput hypothetical, in text and JSON.
TEST(TrainDefaults, MemoryBreakdownAndHypotheticalThroughput) {
  const auto fits = train({"--preset", "dgx-h100", "--model", "gpt3-1.3b", "--global-batch", "8"});
  const auto& m = fits["memory"];
  double sum = 0;
  for (const char* k : {"weights_GiB", "gradients_GiB", "main_gradients_GiB", "optimizer_GiB", "activations_GiB",
                        "communication_buffers_GiB", "fragmentation_GiB"}) {
    ASSERT_TRUE(m.contains(k)) << k;
    sum += m[k].get<double>();
  }
  EXPECT_NEAR(sum, m["total_GiB"].get<double>(), 1e-9);
  EXPECT_GT(m["main_gradients_GiB"].get<double>(), 0);  // bf16 with Megatron's fp32 main gradients
  EXPECT_GT(m["communication_buffers_GiB"].get<double>(), 0);
  EXPECT_FALSE(fits["hypothetical"].get<bool>());
  const std::vector<std::string> big = {"train",        "--preset",       "dgx-h100", "--model",
                                        "llama3.1-70b", "--global-batch", "8"};
  auto json_args = big;
  json_args.insert(json_args.end(), {"--format", "json"});
  const auto over = run_cli(json_args);
  ASSERT_EQ(over.code, 0) << over.err;
  const auto j = nlohmann::json::parse(over.out);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_TRUE(j["hypothetical"].get<bool>());
  const auto text = run_cli(big);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("DOES NOT FIT", 0), 0U) << text.out.substr(0, 200);
  EXPECT_NE(text.out.find("(hypothetical"), std::string::npos);
  EXPECT_NE(text.out.find("fp32 main gradients"), std::string::npos);
}
