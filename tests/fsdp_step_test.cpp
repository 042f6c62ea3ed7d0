// Fully sharded data parallelism (FSDP FULL_SHARD / HYBRID_SHARD, ZeRO-3): the schedule of
// gathers, compute and reduce-scatters, and the training step that uses it.
#include <gtest/gtest.h>

#include "test_support.hpp"
#include "work/fsdp_step.hpp"
#include "work/model_library.hpp"
#include "work/train_step.hpp"

using gf::test::preset;

namespace gf::work {
namespace {

// 10 layers of 100M parameters (fp32 gradient bytes), 10 ms forward, 20 ms backward.
std::vector<LayerCost> layers() {
  std::vector<LayerCost> out;
  for (int i = 0; i < 10; ++i) out.push_back({"layer", 10e-3, 20e-3, 400e6});
  return out;
}

CollectiveTime fixed(double gather_s, double scatter_s, double reduce_s = 0) {
  return [=](comm::Op op, double) {
    const double t = op == comm::Op::all_gather ? gather_s : op == comm::Op::reduce_scatter ? scatter_s : reduce_s;
    return CollectiveTimes{t, t};
  };
}

TEST(FsdpSchedule, FreeCommunicationCostsNothing) {
  FsdpOptions o;
  o.accumulation = 2;
  o.optimizer_s = 5e-3;
  const auto s = fsdp_schedule(layers(), o, fixed(0, 0));
  EXPECT_NEAR(s.step_s, 2 * 0.3 + 5e-3, 1e-12);
  EXPECT_NEAR(s.exposed_s, 0, 1e-12);
}

// Fast collectives hide behind compute but for the first gather and the last reduce-scatter.
TEST(FsdpSchedule, PrefetchHidesGathersBehindCompute) {
  FsdpOptions o;
  const auto s = fsdp_schedule(layers(), o, fixed(2e-3, 3e-3));
  EXPECT_NEAR(s.step_s, 2e-3 + 0.3 + 3e-3, 1e-9);
  // Two gathers and one reduce-scatter per layer, all counted as communication.
  EXPECT_NEAR(s.communication_s, 10 * (2 * 2e-3 + 3e-3), 1e-9);
}

// Slow gathers bound the step: the gather stream carries two per layer per micro-batch.
TEST(FsdpSchedule, SlowGathersBoundTheStep) {
  FsdpOptions o;
  o.accumulation = 3;
  const auto s = fsdp_schedule(layers(), o, fixed(50e-3, 1e-3));
  EXPECT_GE(s.step_s, 3 * 20 * 50e-3);
  EXPECT_LT(s.step_s, 3 * 20 * 50e-3 + 0.03 + 1e-3 + 1e-9);
}

// Hybrid sharding adds one all-reduce per layer, once per step, on the reduce stream.
TEST(FsdpSchedule, HybridReducesAcrossReplicasOncePerStep) {
  FsdpOptions o;
  o.accumulation = 2;
  o.replicate = true;
  const auto plain = fsdp_schedule(layers(), FsdpOptions{.accumulation = 2}, fixed(1e-3, 1e-3, 40e-3));
  const auto hybrid = fsdp_schedule(layers(), o, fixed(1e-3, 1e-3, 40e-3));
  EXPECT_NEAR(hybrid.communication_s - plain.communication_s, 10 * 40e-3, 1e-9);
  // The first gather (1 ms), a micro-batch (0.3 s) and the last one's forward (0.1 s) and first
  // backward layer (20 ms); then the reduce stream carries ten reduce-scatters with their 40 ms
  // all-reduces, beyond the compute's end.
  EXPECT_NEAR(hybrid.step_s, 1e-3 + 0.3 + 0.1 + 0.02 + 10 * 41e-3, 1e-9);
  EXPECT_GT(hybrid.step_s, plain.step_s + 0.2);
}

TrainResult step(const char* network, Sharding sharding) {
  topo::ClusterOverrides ov;
  ov.nodes = 2;
  ov.network = network;
  const auto t = preset("dgx-h100", ov);
  TrainOptions o;
  o.layout.dp = 16;
  o.global_batch = 32;
  o.memory.sharding = sharding;
  return train_step(t, library_model("llama3.1-8b"), o);
}

// Full sharding holds a sixteenth of the weights, gradients and optimizer states; hybrid
// (sharded inside a node) an eighth; on a slow network hybrid's once-per-step all-reduce of
// the shard beats full sharding's per-micro-batch gathers and reduce-scatters across nodes.
TEST(FsdpTrain, ShardingTradesMemoryForTraffic) {
  const auto none = step("ib-ndr", Sharding::none);
  const auto full = step("ib-ndr", Sharding::fsdp_full);
  const auto hybrid = step("ib-ndr", Sharding::fsdp_hybrid);
  EXPECT_LT(full.memory.total, hybrid.memory.total);
  EXPECT_LT(hybrid.memory.total, none.memory.total);
  EXPECT_GT(full.dp_communication_s, 0);
  const auto slow_full = step("eth-25g", Sharding::fsdp_full);
  const auto slow_hybrid = step("eth-25g", Sharding::fsdp_hybrid);
  EXPECT_LT(slow_hybrid.step_s, slow_full.step_s);
  EXPECT_GT(slow_full.step_s, full.step_s);
  EXPECT_DOUBLE_EQ(step("ib-ndr", Sharding::zero3).step_s, full.step_s);
}

}  // namespace
}  // namespace gf::work
