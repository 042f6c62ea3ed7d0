#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "comm/ecmp_flows.hpp"
#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "core/mix.hpp"
#include "sim/engine.hpp"
#include "sim/task_graph.hpp"
#include "test_support.hpp"
#include "topo/ecmp_load.hpp"

using gf::test::preset;

namespace gf {
namespace {

topo::ClusterOverrides cluster(long nodes, const std::string& network, topo::FabricKind kind, int tiers,
                               double oversub = 1.0) {
  topo::ClusterOverrides o;
  o.nodes = nodes;
  o.network = network;
  o.fabric = kind;
  o.tiers = tiers;
  o.oversubscription = oversub;
  return o;
}

// Balls in bins, worked by hand: 2 balls in 2 bins share a bin half the time (E[max] 1.5); 3 in
// 3 are all apart 6/27 of the time and all together 3/27 (E[max] 51/27); the worse of two
// independent 2-in-2 throws is 2 unless both split (E 1.75).
TEST(EcmpLoad, ExpectedMaxLoadByHand) {
  EXPECT_NEAR(topo::expected_max_load(2, 2), 1.5, 1e-9);
  EXPECT_NEAR(topo::expected_max_load(3, 3), 51.0 / 27.0, 1e-9);
  EXPECT_NEAR(topo::expected_max_load(2, 2, 2), 1.75, 1e-9);
  EXPECT_NEAR(topo::expected_max_load(5, 1), 5.0, 1e-12);
  EXPECT_NEAR(topo::expected_max_load(1, 8), 1.0, 1e-9);
}

// A perfect spread needs no hash: one uplink is no choice, and many flows per uplink even out;
// as many flows as uplinks is the worst case, over 2x slower than a perfect spread at 32.
TEST(EcmpLoad, SlowdownFallsAsFlowsOutnumberUplinks) {
  EXPECT_DOUBLE_EQ(topo::ecmp_slowdown(16, 1), 1.0);
  const double even = topo::ecmp_slowdown(32, 32);
  const double eight_each = topo::ecmp_slowdown(256, 32);
  EXPECT_GT(even, 2.0);
  EXPECT_GT(eight_each, 1.0);
  EXPECT_LT(eight_each, even);
  // More leaves hashing, a worse busiest one.
  EXPECT_GT(topo::ecmp_slowdown(32, 32, 8), even);
}

// A hashed path leaves its leaf on one uplink cable and enters the far leaf on one downlink
// cable, where the bundled path used the leaf's whole uplink bundle; inside one leaf it is the
// bundled path itself.
TEST(EcmpFabric, HashedPathTakesOneCableEachWay) {
  const auto t = preset("dgx-h100", cluster(16, "roce-400g", topo::FabricKind::fat_tree, 2, 3.0));
  const auto& f = *t.fabric();
  const auto& g = t.graph();
  const long per_leaf = f.shape().down_ports / t.node().nics();
  ASSERT_GE(per_leaf, 1);
  std::vector<topo::LinkId> bundled, hashed;
  f.route_bundled(0, 0, per_leaf, 0, bundled);  // node 0 to the first node of the next leaf
  ASSERT_EQ(bundled.size(), 4u);
  EXPECT_EQ(g.link(bundled[1]).kind, topo::LinkKind::bundle);
  std::set<topo::LinkId> uplinks;
  for (std::uint64_t h = 0; h < 200; ++h) {
    ASSERT_TRUE(f.hashed_path(bundled, mix64(h), hashed));
    ASSERT_EQ(hashed.size(), 4u);
    EXPECT_EQ(hashed.front(), bundled.front());
    EXPECT_EQ(hashed.back(), bundled.back());
    const auto& up = g.link(hashed[1]);
    const auto& down = g.link(hashed[2]);
    EXPECT_EQ(up.kind, topo::LinkKind::network);
    EXPECT_EQ(up.src, g.link(bundled[1]).src);    // from node 0's leaf
    EXPECT_EQ(down.dst, g.link(bundled[2]).dst);  // into the far leaf
    EXPECT_EQ(up.dst, down.src);                  // through one spine
    EXPECT_DOUBLE_EQ(up.capacity.value(), g.link(bundled[1]).capacity.value() / f.shape().up_ports);
    uplinks.insert(hashed[1]);
  }
  EXPECT_EQ(static_cast<int>(uplinks.size()), f.shape().up_ports);  // every uplink is somebody's hash
  std::vector<topo::LinkId> inside;
  f.route_bundled(0, 0, 0, 1, inside);
  EXPECT_FALSE(f.hashed_path(inside, 7, hashed));
  EXPECT_EQ(hashed, inside);
}

// Where both apply they agree: k equal flows from one leaf's NICs to another leaf's, each placed
// by its hash, take the flow engine (max-min sharing) as long as the busiest uplink needs;
// averaged over placements that is the closed form's expected maximum load. Three tiers keep the
// aggregation switch on the way down, so the far leaf's downlinks mirror the uplinks exactly.
TEST(EcmpFabric, FlowEngineAveragesToBallsInBins) {
  const auto t = preset("dgx-h100", cluster(16, "roce-400g", topo::FabricKind::fat_tree, 3, 3.0));
  const auto& f = *t.fabric();
  const auto& g = t.graph();
  const long u = f.shape().up_ports;
  const int nics = t.node().nics();
  const long per_leaf = f.shape().down_ports / nics;
  ASSERT_EQ(f.shape().tiers, 3);
  ASSERT_GE(per_leaf * nics, u);
  std::vector<double> capacity;
  for (topo::LinkId l = 0; l < static_cast<topo::LinkId>(g.link_count()); ++l)
    capacity.push_back(g.link(l).capacity.value());
  const double port = capacity[f.nic_uplink(0, 0)];  // NIC and port run at one rate here
  const double bytes = 1e9;
  const int placements = 300;
  double sum = 0;
  std::vector<topo::LinkId> bundled, hashed;
  for (int p = 0; p < placements; ++p) {
    sim::TaskGraph graph;
    for (long e = 0; e < u; ++e) {  // as many flows as uplinks, one per NIC
      bundled.clear();
      const long node = e / nics;
      const int nic = static_cast<int>(e % nics);
      f.route_bundled(node, nic, per_leaf + node, nic, bundled);
      ASSERT_TRUE(f.hashed_path(bundled, mix64(static_cast<std::uint64_t>(p) * 1000003u + e), hashed));
      graph.add_flow(hashed, Bytes(bytes), Seconds(0));
    }
    sum += sim::simulate(graph, capacity).makespan.value();
  }
  const double engine = sum / placements;
  const double closed = topo::expected_max_load(u, u) * bytes / port;
  EXPECT_NEAR(engine / closed, 1.0, 0.04) << "engine " << engine << " closed " << closed << " u " << u;
  EXPECT_GT(closed, 2.0 * bytes / port);  // collisions cost more than 2x here
}

double ring_data_time(const topo::Topology& t, comm::Engine e, std::uint64_t salt = 0, int qps = -1) {
  comm::NcclConfig env;
  if (qps > 0) comm::apply_nccl_assignment(env, "NCCL_IB_QPS_PER_CONNECTION=" + std::to_string(qps), nullptr);
  comm::Communicator c(t, 0, env);
  c.set_ecmp_salt(salt);
  return comm::data_time(c, comm::Op::all_gather, comm::Algo::ring, comm::Proto::simple, 1 << 30, e).value();
}

// On RoCE (ECMP hashing) a ring that crosses an oversubscribed leaf's uplinks is slower than
// the same ring with its flows spread ideally (InfiniBand's adaptive routing), and more queue
// pairs per connection bring it back towards the spread: Meta's E-ECMP with QP scaling.
TEST(EcmpComm, HashingSlowsTheRingAndQueuePairsRecoverIt) {
  const auto roce = preset("dgx-h100", cluster(16, "roce-400g", topo::FabricKind::fat_tree, 2, 7.0));
  ASSERT_TRUE(comm::ecmp_hashed(comm::Communicator(roce, 0)));
  double hashed = 0;
  double many_qps = 0;
  const int placements = 8;
  for (int s = 0; s < placements; ++s) {
    hashed += ring_data_time(roce, comm::Engine::flow, static_cast<std::uint64_t>(s)) / placements;
    many_qps += ring_data_time(roce, comm::Engine::flow, static_cast<std::uint64_t>(s), 16) / placements;
  }
  comm::NcclConfig env;
  comm::apply_nccl_assignment(env, "NCCL_IB_QPS_PER_CONNECTION=16", nullptr);
  EXPECT_EQ(comm::flows_per_connection(comm::Communicator(roce, 0, env)), 16);
  // The same fabric with InfiniBand's adaptive routing: the bundle.
  const auto ib = preset("dgx-h100", cluster(16, "ib-ndr", topo::FabricKind::fat_tree, 2, 7.0));
  ASSERT_FALSE(comm::ecmp_hashed(comm::Communicator(ib, 0)));
  EXPECT_GT(hashed, many_qps * 1.1);
  EXPECT_LT(many_qps, hashed);
  // Where both apply the closed form's expected slowdown agrees with the engine's average.
  const double closed = ring_data_time(roce, comm::Engine::analytic);
  EXPECT_NEAR(closed / hashed, 1.0, 0.1) << "closed " << closed << " engine " << hashed;
  // The same ring spread ideally (InfiniBand's adaptive routing) is more than 2x faster here.
  // (The uplinks bound both; scaled by the two networks' link efficiencies.)
  const double spread = ring_data_time(ib, comm::Engine::flow) * ib.network().efficiency / roce.network().efficiency;
  EXPECT_GT(hashed, 2.0 * spread);
  EXPECT_GT(many_qps, spread);
}

// Traffic that stays inside a leaf has nothing to hash: the flow engine gives the same time
// whatever the placement, and the closed form agrees with it.
TEST(EcmpComm, NoCollisionsInsideALeaf) {
  const auto t = preset("dgx-h100", cluster(2, "roce-400g", topo::FabricKind::fat_tree, 2, 1.0));
  ASSERT_GE(t.fabric()->shape().tiers, 1);
  const double first = ring_data_time(t, comm::Engine::flow, 0);
  for (std::uint64_t s = 1; s < 4; ++s) EXPECT_DOUBLE_EQ(ring_data_time(t, comm::Engine::flow, s), first);
  EXPECT_NEAR(ring_data_time(t, comm::Engine::analytic) / first, 1.0, 0.02);
}

// A rail-optimized fabric gives each rail its own leaves: NIC r of every node of a group meets
// on one leaf, so rail-aligned traffic never reaches a spine and has nothing to hash.
TEST(EcmpFabric, RailAlignedTrafficStaysOnItsLeaf) {
  const auto t = preset("dgx-h100", cluster(16, "roce-400g", topo::FabricKind::rail, 2, 1.0));
  const auto& f = *t.fabric();
  ASSERT_EQ(f.shape().tiers, 2);
  std::vector<topo::LinkId> path, hashed;
  for (int r = 0; r < t.node().nics(); ++r) {
    path.clear();
    f.route_bundled(0, r, 15, r, path);
    EXPECT_EQ(path.size(), 2u);  // NIC -> leaf -> NIC
    EXPECT_FALSE(f.hashed_path(path, mix64(static_cast<std::uint64_t>(r)), hashed));
  }
  // Across rails the spine is reached, and the fabric could hash it like any fat-tree's; the
  // collectives leave a rail fabric spread (their rings cross rails where NCCL's do not).
  path.clear();
  f.route_bundled(0, 0, 15, 1, path);
  EXPECT_TRUE(f.hashed_path(path, 1, hashed));
  EXPECT_FALSE(comm::ecmp_hashed(comm::Communicator(t, 0)));
}

}  // namespace
}  // namespace gf
