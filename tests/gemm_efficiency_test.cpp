// GEMM efficiency by shape and the overlap of tensor-parallel collectives with GEMMs, as the
// frameworks run them (src/work/gemm_*.cpp, data/compute/efficiency.yaml).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "test_support.hpp"
#include "work/compute_efficiency.hpp"
#include "work/gemm_comm_overlap.hpp"
#include "work/layer_cost.hpp"

namespace gf::work {
namespace {

using gf::test::run_cli;

nlohmann::json train(std::vector<std::string> args) {
  args.insert(args.begin(), "train");
  args.insert(args.end(), {"--format", "json"});
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// The tiles' k-independent work comes from the file's K sweeps: H100 and B200 agree on about 250
// k-steps, and the constant is their median.
TEST(GemmDepth, TileOverheadFromTheKSweeps) {
  const double k0 = ComputeEfficiency::builtin().tile_overhead_k();
  EXPECT_GT(k0, 200);
  EXPECT_LT(k0, 300);
  // One sweep on a line: 5 us launch, then 10 ns per k-step over K + 100.
  const char* sweep = R"(families:
  - family: hopper
    gpus: [h100-sxm5]
    gemm:
      - id: s
        kind: k_sweep
        m: 1000
        n: 1000
        launch: {m: 100, n: 100, k: 100, tflops: 0.4}
        points:
          - {k: 1000, tflops: 125}
          - {k: 2000, tflops: 153.84615384615384}
)";
  // Launch: 2e6 FLOP at 0.4 TFLOP/s, 5 us. The points take 5 us + 10 ns x (k + 100): 16 and 26 us.
  EXPECT_NEAR(ComputeEfficiency::parse(sweep, "eff.yaml").tile_overhead_k(), 100, 1e-6);
}

// A GEMM as deep as the shape its ceiling was measured at runs at the ceiling; a shallower one
// pays its tiles' fixed work on fewer FLOPs.
TEST(GemmDepth, ShallowGemmsPayMorePerFlop) {
  EXPECT_DOUBLE_EQ(gemm_depth_factor(8192, 8192, 250), 1.0);
  EXPECT_NEAR(gemm_depth_factor(1024, 8192, 250), (1274.0 / 1024) / (8442.0 / 8192), 1e-12);
  EXPECT_DOUBLE_EQ(gemm_depth_factor(64, 8192, 0), 1.0);  // no sweep: no depth charge
  const auto& cat = gf::test::catalog();
  const ComputeEfficiency& eff = ComputeEfficiency::builtin();
  const ComputeContext c = resolve_rates({cat.gpu("a100-sxm4-80gb"), Precision::bf16, eff});
  // The same FLOPs as one 8192-deep GEMM and as one 1024-deep GEMM with 8x the columns.
  const double deep = gemm_seconds(c, 8192, 1024, 8192) - c.fixed_s;
  const double shallow = gemm_seconds(c, 8192, 8192, 1024) - c.fixed_s;
  // (1024 + K0) / 1024 over (8192 + K0) / 8192 is 1.21; the deep GEMM's 512 tiles fill their last
  // of five waves on 108 SMs less well (1.055 against 1.002), so 1.15 of it is left.
  EXPECT_GT(shallow, 1.10 * deep);
  EXPECT_LT(shallow, 1.25 * deep);
}

// A sweep that cannot give the constant is an error at its line, not a silent default.
TEST(GemmDepth, BadSweepIsAnInputError) {
  for (const char* bad : {"families:\n  - family: x\n    gemm:\n      - {id: s, kind: k_sweep, m: 1, n: 1}\n",
                          "families:\n  - family: x\n    gemm:\n      - {id: s, kind: k_sweep, m: 1, n: 1, launch: "
                          "{m: 1, n: 1, k: 1, tflops: 1}, points: [{k: 2, tflops: 1}, {k: 1, tflops: 0.1}]}\n"}) {
    try {
      (void)ComputeEfficiency::parse(bad, "eff.yaml");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("eff.yaml"), std::string::npos) << e.what();
    }
  }
}

// The built-in file carries Transformer Engine's pipelined reduce-scatter defaults.
TEST(GemmCommOverlap, BuiltinFileHasTransformerEngineDefaults) {
  const UserbuffersOverlap& ub = ComputeEfficiency::builtin().userbuffers();
  EXPECT_EQ(ub.pipeline_comm_sms, 16);
  EXPECT_EQ(ub.pipeline_splits, 4);
  EXPECT_NE(ub.source.find("TransformerEngine"), std::string::npos);
}

// A ring exchange hides each remote shard under the previous GEMM chunk: nothing shows while
// every shard is faster than a chunk, the excess shows when not; splitting costs a kernel per
// extra chunk either way.
TEST(GemmCommOverlap, RingExchangeHidesShardsUnderChunks) {
  const OverlapCost hidden = ring_exchange_all_gather(0.7e-3, 1.6e-3, 8, 5e-6);
  EXPECT_DOUBLE_EQ(hidden.exposed_s, 0.0);
  EXPECT_NEAR(hidden.extra_compute_s, 7 * 5e-6, 1e-12);
  // 7 shards of 0.2 ms under 8 chunks of 0.1 ms: 0.1 ms of each shard shows.
  const OverlapCost slow = ring_exchange_all_gather(1.4e-3, 0.8e-3, 8, 0);
  EXPECT_NEAR(slow.exposed_s, 7 * 0.1e-3, 1e-12);
  EXPECT_DOUBLE_EQ(ring_exchange_all_gather(1e-3, 1e-3, 1, 5e-6).exposed_s, 0.0);  // no TP, no gather
}

// The pipelined reduce-scatter always leaves its last chunk's scatter exposed, and the SMs its
// kernel holds slow the GEMM by SMs / (SMs - 16).
TEST(GemmCommOverlap, PipelinedReduceScatterCostsSmsAndItsLastChunk) {
  const UserbuffersOverlap ub{16, 4, "test"};
  const OverlapCost c = pipelined_reduce_scatter(0.4e-3, 2e-3, 132, ub, 0);
  EXPECT_NEAR(c.exposed_s, 0.1e-3, 1e-12);
  EXPECT_NEAR(c.extra_compute_s, 2e-3 * (132.0 / 116.0 - 1.0), 1e-12);
  // A GEMM too short to cover the scatter's chunks exposes the rest too.
  const OverlapCost short_gemm = pipelined_reduce_scatter(0.4e-3, 0.2e-3, 0, ub, 0);
  EXPECT_NEAR(short_gemm.exposed_s, 0.1e-3 + 3 * (0.1e-3 - 0.05e-3), 1e-12);
  EXPECT_DOUBLE_EQ(short_gemm.extra_compute_s, 0.0);  // SM count unknown: no margin charged
}

// Transformer Engine's userbuffers need the TP group on NVLink inside a server: on a PCIe H100
// server the flag changes nothing and says why; on NVSwitch it hides part of the TP time.
TEST(GemmCommOverlap, OnlyOverNvlink) {
  const std::vector<std::string> job{"--model",        "llama2-13b", "--tp",          "8", "--sequence-parallel",
                                     "--global-batch", "16",         "--micro-batch", "1"};
  auto on = [&](const std::string& preset, bool overlap) {
    std::vector<std::string> a{"--preset", preset};
    a.insert(a.end(), job.begin(), job.end());
    if (overlap) a.push_back("--tp-comm-overlap");
    return train(a);
  };
  const auto pcie = on("pcie-8x-h100", false);
  const auto pcie_overlap = on("pcie-8x-h100", true);
  EXPECT_DOUBLE_EQ(pcie_overlap["breakdown"]["tp_communication"].get<double>(),
                   pcie["breakdown"]["tp_communication"].get<double>());
  EXPECT_NE(pcie_overlap.dump().find("not joined by NVLink"), std::string::npos);
  const auto nvswitch = on("dgx-h100", false);
  const auto nvswitch_overlap = on("dgx-h100", true);
  EXPECT_LT(nvswitch_overlap["breakdown"]["tp_communication"].get<double>(),
            0.8 * nvswitch["breakdown"]["tp_communication"].get<double>());
  // Never free: the last reduce-scatter chunk and the SMs it holds stay in the step.
  EXPECT_GT(nvswitch_overlap["breakdown"]["tp_communication"].get<double>(), 0.0);
}

}  // namespace
}  // namespace gf::work
