// A DDP step on the flow engine: bucket all-reduces overlap the backward pass; on a slow
// network they do not fit behind it and the step waits for them.
#include <gtest/gtest.h>

#include <numeric>

#include "test_support.hpp"
#include "work/ddp_step.hpp"

using gf::test::preset;

namespace gf::work {
namespace {

// 24 layers of 12.5M fp32 parameters (50 MB of gradients each), 1 ms forward, 2 ms backward.
std::vector<LayerCost> model() {
  std::vector<LayerCost> layers;
  for (int i = 0; i < 24; ++i) {
    std::string name(1, 'L');  // (not "L" + ...: GCC 12 warns falsely on that, -Wrestrict)
    name += std::to_string(i);
    layers.push_back({name, 1e-3, 2e-3, 50e6});
  }
  return layers;
}

topo::ClusterOverrides cluster(long nodes, const std::string& network = {}) {
  topo::ClusterOverrides o;
  o.nodes = nodes;
  if (!network.empty()) o.network = network;
  return o;
}

TEST(DdpStep, BucketsOverlapTheBackwardPassOnAFastFabric) {
  const auto t = preset("dgx-h100", cluster(2));
  const comm::Communicator dp(t, 0);
  const auto s = ddp_step(dp, model(), DdpOptions{});
  EXPECT_NEAR(s.compute_s, 24 * 3e-3, 1e-12);
  // 1.2 GB of gradients: a 1 MiB first bucket's worth, then 25 MiB ones (each layer's 50 MB
  // closes a bucket by itself).
  EXPECT_EQ(s.buckets.size(), 24u);
  EXPECT_GE(s.step_s, s.compute_s);
  // Only what follows the last gradient is exposed: at most the last buckets' all-reduces.
  EXPECT_LT(s.exposed_s, 2 * s.buckets.back().alone_s + 1e-4);
  EXPECT_LT(s.exposed_s, 0.2 * s.communication_s);
  // Buckets run one after another on NCCL's stream, each after its gradients are ready.
  for (std::size_t i = 1; i < s.buckets.size(); ++i) EXPECT_GE(s.buckets[i].start_s, s.buckets[i - 1].end_s - 1e-12);
  EXPECT_GE(s.buckets.front().start_s, 24e-3 + 2e-3 - 1e-12);  // after the last layer's backward
}

TEST(DdpStep, OnGigabitEthernetTheStepWaitsForGradients) {
  const auto t = preset("dgx-h100", cluster(2, "eth-1g"));
  const comm::Communicator dp(t, 0);
  const auto s = ddp_step(dp, model(), DdpOptions{});
  // The all-reduces take far longer than the backward pass: the step is theirs.
  EXPECT_GT(s.exposed_s, 0.9 * (s.step_s - s.compute_s));
  EXPECT_GT(s.exposed_s / s.step_s, 0.8);
  EXPECT_NEAR(s.step_s, 24e-3 + 2e-3 + s.communication_s, 0.02 * s.step_s);  // comm after the first bucket's layer
}

TEST(DdpStep, AccumulationReducesOncePerStep) {
  const auto t = preset("dgx-h100", cluster(2));
  const comm::Communicator dp(t, 0);
  DdpOptions o;
  const auto one = ddp_step(dp, model(), o);
  o.accumulation = 4;
  const auto four = ddp_step(dp, model(), o);
  EXPECT_NEAR(four.compute_s, 4 * one.compute_s, 1e-12);
  EXPECT_EQ(four.buckets.size(), one.buckets.size());
  EXPECT_NEAR(four.communication_s, one.communication_s, 1e-12);
  EXPECT_NEAR(four.exposed_s, one.exposed_s, 1e-6);
}

}  // namespace
}  // namespace gf::work
