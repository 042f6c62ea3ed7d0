#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "comm/collective_tasks.hpp"
#include "sim/engine.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

topo::ClusterOverrides nodes(long n) {
  topo::ClusterOverrides o;
  o.nodes = n;
  return o;
}

CollectiveRequest request(Op op, double size, std::optional<Algo> algo = {}) {
  CollectiveRequest r;
  r.op = op;
  r.size = size;
  r.algo = algo;
  r.engine = Engine::flow;
  return r;
}

double alone_in_graph(const Communicator& c, const CollectiveRequest& r) {
  sim::TaskGraph g;
  const auto placed = add_collective(g, c, r);
  const auto s = sim::simulate(g, c.capacity());
  EXPECT_DOUBLE_EQ(s.start[placed.entry], 0.0);
  EXPECT_DOUBLE_EQ(s.finish[placed.exit], s.makespan.value());
  return s.makespan.value();
}

// Alone in a graph, a placed collective takes what predict gives with the flow engine: the
// latency, protocol overhead, floors and fill are inside the graph, not added after it.
TEST(CollectiveTasks, AloneTakesThePredictedTime) {
  struct Case {
    const char* preset;
    long nodes;
    Op op;
    double size;
    std::optional<Algo> algo;
  };
  const std::vector<Case> cases{
      {"dgx-h100", 1, Op::all_reduce, 8, {}},
      {"dgx-h100", 1, Op::all_reduce, 1 << 20, {}},
      {"dgx-h100", 1, Op::all_reduce, 1 << 30, {}},
      {"dgx-h100", 2, Op::all_reduce, 64 << 20, {}},
      {"dgx-h100", 2, Op::all_reduce, 4 << 20, Algo::tree},
      {"dgx-a100", 4, Op::all_reduce, 256 << 20, Algo::hierarchical},
      {"dgx-a100", 2, Op::all_gather, 32 << 20, {}},
      {"dgx-a100", 1, Op::alltoall, 64 << 20, {}},
      {"dgx-a100", 1, Op::sendrecv, 64 << 20, {}},
      {"dgx-a100", 1, Op::broadcast, 16 << 20, {}},
      {"pcie-4x-rtx4090", 1, Op::all_reduce, 256 << 20, {}},  // SHM: per-connection floor
      {"pcie-8x-a100", 2, Op::reduce_scatter, 1 << 16, {}},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(::testing::Message() << k.preset << " x" << k.nodes << " " << to_string(k.op) << " " << k.size);
    const auto t = preset(k.preset, nodes(k.nodes));
    const Communicator c(t, 0);
    const auto r = request(k.op, k.size, k.algo);
    const double predicted = predict(c, r).time.value();
    EXPECT_NEAR(alone_in_graph(c, r), predicted, 1e-9 * predicted + 1e-12);
  }
}

// Two data-parallel groups whose GPUs share one NIC (GPUs 0 and 1 of a PCIe A100 server sit
// on the same switch as NIC 0) slow each other down; a group on another NIC does not.
TEST(CollectiveTasks, GroupsSharingANicSlowEachOtherDown) {
  const auto t = preset("pcie-8x-a100", nodes(2));
  const Communicator a(t, std::vector<long>{0, 8});
  const Communicator same_nic(t, std::vector<long>{1, 9});
  const Communicator other_nic(t, std::vector<long>{2, 10});
  const auto r = request(Op::all_reduce, 256 << 20, Algo::ring);
  const double alone = alone_in_graph(a, r);

  auto together = [&](const Communicator& other) {
    sim::TaskGraph g;
    const auto pa = add_collective(g, a, r);
    const auto pb = add_collective(g, other, r);
    const auto s = sim::simulate(g, a.capacity());
    return std::pair{s.finish[pa.exit], s.finish[pb.exit]};
  };
  const auto [shared_a, shared_b] = together(same_nic);
  EXPECT_GT(shared_a, 1.7 * alone);  // the NIC's bandwidth is split two ways
  EXPECT_LT(shared_a, 2.05 * alone);
  EXPECT_NEAR(shared_a, shared_b, 1e-9);
  const auto [apart_a, apart_b] = together(other_nic);
  EXPECT_NEAR(apart_a, alone, 1e-3 * alone);
  EXPECT_NEAR(apart_b, alone_in_graph(other_nic, r), 1e-3 * alone);
}

// A collective waits for its inputs and overlaps compute that does not depend on it, as a
// gradient bucket's all-reduce overlaps the rest of the backward pass.
TEST(CollectiveTasks, StartsAfterItsInputsAndOverlapsCompute) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  const auto r = request(Op::all_reduce, 25 << 20);
  const double comm = alone_in_graph(c, r);

  sim::TaskGraph g;
  const auto first_layer = g.add_delay(Seconds(1e-3));
  const auto placed = add_collective(g, c, r);
  g.add_dependency(first_layer, placed.entry);
  const auto rest_of_backward = g.add_delay(Seconds(5 * comm));
  g.add_dependency(first_layer, rest_of_backward);
  const auto s = sim::simulate(g, c.capacity());
  EXPECT_NEAR(s.start[placed.entry], 1e-3, 1e-12);
  EXPECT_NEAR(s.finish[placed.exit], 1e-3 + comm, 1e-9);
  EXPECT_NEAR(s.makespan.value(), 1e-3 + 5 * comm, 1e-9);  // hidden behind compute
  EXPECT_GT(placed.flows, 0u);
  EXPECT_EQ(placed.alone.algo, predict(c, r).algo);
}

// A collective with nothing to move (zero bytes) is its latency and nothing else.
TEST(CollectiveTasks, EmptyCollectiveIsItsLatency) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  sim::TaskGraph g;
  const auto placed = add_collective(g, c, request(Op::all_reduce, 0));
  const auto s = sim::simulate(g, c.capacity());
  EXPECT_EQ(placed.flows, 0u);
  EXPECT_NEAR(s.makespan.value(), placed.alone.latency.value(), 1e-15);
}

}  // namespace
}  // namespace gf::comm
