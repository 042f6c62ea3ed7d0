// GEMM efficiency by shape and the overlap of tensor-parallel collectives with GEMMs, as the
// frameworks run them (src/work/gemm_*.cpp, data/compute/efficiency.yaml).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "work/compute_efficiency.hpp"
#include "work/gemm_comm_overlap.hpp"

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
