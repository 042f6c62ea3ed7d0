#include <gtest/gtest.h>

#include <vector>

#include "sim/engine.hpp"

namespace gf::sim {
namespace {

constexpr double kGB = 1e9;

TEST(FlowEngine, SingleFlowTakesBytesOverCapacityPlusLatency) {
  TaskGraph g;
  const std::vector<LinkId> path{0, 1};
  g.add_flow(path, bytes(10 * kGB), microseconds(5));
  const std::vector<double> cap{100 * kGB, 50 * kGB};
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.makespan.value(), 10.0 / 50.0 + 5e-6, 1e-12);
}

TEST(FlowEngine, FlowsShareABottleneckFairly) {
  TaskGraph g;
  const std::vector<LinkId> a{0};
  g.add_flow(a, bytes(10 * kGB), Seconds(0));
  g.add_flow(a, bytes(10 * kGB), Seconds(0));
  const std::vector<double> cap{10 * kGB};
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.finish[0], 2.0, 1e-9);
  EXPECT_NEAR(r.finish[1], 2.0, 1e-9);
}

TEST(FlowEngine, MaxMinGivesUnusedShareToOthers) {
  // Flow 0 uses links 0 and 1; flow 1 only link 1; link 0 is narrow, so flow 1 gets the rest
  // of link 1 (max-min, not equal split).
  TaskGraph g;
  const std::vector<LinkId> p0{0, 1};
  const std::vector<LinkId> p1{1};
  g.add_flow(p0, bytes(2 * kGB), Seconds(0));
  g.add_flow(p1, bytes(8 * kGB), Seconds(0));
  const std::vector<double> cap{2 * kGB, 10 * kGB};
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.finish[0], 1.0, 1e-9);  // 2 GB at 2 GB/s
  EXPECT_NEAR(r.finish[1], 1.0, 1e-9);  // 8 GB at 8 GB/s
}

TEST(FlowEngine, RatesAreRecomputedWhenAFlowEnds) {
  TaskGraph g;
  const std::vector<LinkId> a{0};
  g.add_flow(a, bytes(1 * kGB), Seconds(0));
  g.add_flow(a, bytes(3 * kGB), Seconds(0));
  const std::vector<double> cap{2 * kGB};
  const auto r = simulate(g, cap);
  // Both at 1 GB/s until t=1 (first done), then the second alone at 2 GB/s for 2 GB: t=2.
  EXPECT_NEAR(r.finish[0], 1.0, 1e-9);
  EXPECT_NEAR(r.finish[1], 2.0, 1e-9);
}

TEST(FlowEngine, DependenciesAndDelaysChain) {
  TaskGraph g;
  const std::vector<LinkId> a{0};
  const TaskId f = g.add_flow(a, bytes(1 * kGB), Seconds(0));
  const TaskId d = g.add_delay(seconds(0.5));
  const TaskId f2 = g.add_flow(a, bytes(1 * kGB), Seconds(0));
  g.add_dependency(f, d);
  g.add_dependency(d, f2);
  const std::vector<double> cap{1 * kGB};
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.start[d], 1.0, 1e-9);
  EXPECT_NEAR(r.start[f2], 1.5, 1e-9);
  EXPECT_NEAR(r.makespan.value(), 2.5, 1e-9);
}

TEST(FlowEngine, IndependentComponentsDoNotInterfere) {
  TaskGraph g;
  const std::vector<LinkId> a{0};
  const std::vector<LinkId> b{1};
  g.add_flow(a, bytes(1 * kGB), Seconds(0));
  g.add_flow(b, bytes(4 * kGB), Seconds(0));
  const std::vector<double> cap{1 * kGB, 1 * kGB};
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.finish[0], 1.0, 1e-9);
  EXPECT_NEAR(r.finish[1], 4.0, 1e-9);
}

TEST(FlowEngine, ZeroByteFlowsFinishAfterTheirLatency) {
  TaskGraph g;
  g.add_flow({}, bytes(0), microseconds(3));
  const auto r = simulate(g, std::vector<double>{});
  EXPECT_NEAR(r.makespan.value(), 3e-6, 1e-15);
}

TEST(FlowEngine, ManyFlowsOnAStar) {
  // 1000 flows from distinct sources into one sink link of 100 GB/s: all finish together.
  TaskGraph g;
  std::vector<double> cap(1001, 10 * kGB);
  cap[1000] = 100 * kGB;
  for (LinkId i = 0; i < 1000; ++i) {
    const std::vector<LinkId> p{i, 1000};
    g.add_flow(p, bytes(0.1 * kGB), Seconds(0));
  }
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.makespan.value(), 1000 * 0.1 / 100.0, 1e-9);
  EXPECT_LE(r.rate_recomputations, 3u);  // one at start, one batch at the end
}

}  // namespace
}  // namespace gf::sim

namespace gf::sim {
namespace {

// A kernel as work on a GPU's compute and HBM resources: alone it takes its roofline time;
// beside another kernel on the same GPU the two share what they both use.
TEST(FlowEngineWork, AKernelAloneTakesItsRoofline) {
  TaskGraph g;
  const std::vector<LinkId> gpu{0, 1};             // compute, HBM: capacity 1 GPU-second per second each
  const std::vector<double> demand{2e-3, 0.5e-3};  // compute-bound: 2 ms of math, 0.5 ms of memory
  g.add_work(gpu, demand, 1.0);
  const std::vector<double> cap{1.0, 1.0};
  EXPECT_NEAR(simulate(g, cap).makespan.value(), 2e-3, 1e-12);
}

TEST(FlowEngineWork, ComputeAndMemoryBoundKernelsOverlap) {
  TaskGraph g;
  const std::vector<LinkId> gpu{0, 1};
  const std::vector<double> math{1e-3, 0.1e-3};
  const std::vector<double> memory{0.1e-3, 1e-3};
  const auto a = g.add_work(gpu, math, 1.0);
  const auto b = g.add_work(gpu, memory, 1.0);
  g.set_label(a, "gemm");
  const std::vector<double> cap{1.0, 1.0};
  const auto r = simulate(g, cap);
  // Each resource carries 1.1 ms of demand: both end at 1.1 ms, not 2 ms in turn.
  EXPECT_NEAR(r.finish[a], 1.1e-3, 1e-12);
  EXPECT_NEAR(r.finish[b], 1.1e-3, 1e-12);
  EXPECT_EQ(g.label(a), "gemm");
  EXPECT_EQ(g.label(b), "");
}

TEST(FlowEngineWork, KernelsOnOneGpuShareItAndFlowsElsewhereDoNot) {
  TaskGraph g;
  const std::vector<LinkId> gpu{0, 1};
  const std::vector<double> math{1e-3, 0.0};
  const auto a = g.add_work(gpu, math, 1.0);
  const auto b = g.add_work(gpu, math, 1.0);
  const std::vector<LinkId> nvlink{2};
  const auto f = g.add_flow(nvlink, bytes(1e9), Seconds(0));  // 1 GB at 100 GB/s: 10 ms
  const std::vector<double> cap{1.0, 1.0, 100e9};
  const auto r = simulate(g, cap);
  EXPECT_NEAR(r.finish[a], 2e-3, 1e-12);
  EXPECT_NEAR(r.finish[b], 2e-3, 1e-12);
  EXPECT_NEAR(r.finish[f], 10e-3, 1e-12);
}

}  // namespace
}  // namespace gf::sim
