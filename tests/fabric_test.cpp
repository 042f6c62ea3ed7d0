#include <gtest/gtest.h>

#include <set>

#include "comm/model.hpp"
#include "test_support.hpp"

using gf::test::catalog;
using gf::test::connected;
using gf::test::input_error;
using gf::test::preset;

namespace gf {
namespace {

topo::ClusterOverrides fabric(long nodes, topo::FabricKind kind, int tiers = 2, double oversub = 1.0) {
  topo::ClusterOverrides o;
  o.nodes = nodes;
  o.fabric = kind;
  o.tiers = tiers;
  o.oversubscription = oversub;
  return o;
}

TEST(FatTree, TwoTierShapeFromRadixAndOversubscription) {
  // 64 DGX H100 = 512 NDR ports on radix-64 Quantum-2: 32 down + 32 up per leaf.
  const auto t = preset("dgx-h100", fabric(64, topo::FabricKind::fat_tree));
  const auto& s = t.fabric()->shape();
  EXPECT_EQ(s.tiers, 2);
  EXPECT_EQ(s.down_ports, 32);
  EXPECT_EQ(s.up_ports, 32);
  EXPECT_EQ(s.leaves, 16);
  EXPECT_EQ(s.spines * s.spine_links, 32);  // every leaf uplink lands on a spine
  EXPECT_LE(s.leaves * s.spine_links, 64);  // and no spine has more links than ports
  // Non-blocking: bisection is half the injection.
  EXPECT_NEAR(in_GBps(t.fabric()->bisection_line()), 512 / 2 * 50.0, 1e-6);
}

TEST(FatTree, OversubscriptionCutsBisection) {
  const auto full = preset("dgx-h100", fabric(64, topo::FabricKind::fat_tree));
  const auto third = preset("dgx-h100", fabric(64, topo::FabricKind::fat_tree, 2, 3.0));
  const auto& s = third.fabric()->shape();
  EXPECT_EQ(s.down_ports, 48);
  EXPECT_EQ(s.up_ports, 16);
  EXPECT_DOUBLE_EQ(s.oversubscription, 3.0);
  EXPECT_NEAR(third.fabric()->bisection_line() / full.fabric()->bisection_line(), 1.0 / 3.0, 0.02);
}

TEST(FatTree, RoutesClimbOnlyAsHighAsNeeded) {
  const auto t = preset("dgx-h100", fabric(64, topo::FabricKind::fat_tree));
  // Nodes 0..3 share leaf 0 (32 ports = 4 nodes x 8 NICs).
  const auto same_leaf = t.route_gpus(0, 3 * 8);
  const auto other_leaf = t.route_gpus(0, 4 * 8);
  EXPECT_EQ(same_leaf.ecmp_paths, 1);
  EXPECT_EQ(other_leaf.ecmp_paths, 32);
  EXPECT_EQ(other_leaf.links.size(), same_leaf.links.size() + 2);
  EXPECT_GT(other_leaf.latency, same_leaf.latency);
  EXPECT_TRUE(connected(t.graph(), other_leaf, t.gpu(0), t.gpu(32)));
}

TEST(FatTree, EcmpSpreadsOverSpines) {
  const auto t = preset("dgx-h100", fabric(64, topo::FabricKind::fat_tree));
  std::set<topo::DeviceId> spines;
  for (long b = 32; b < 512; b += 8) {
    const auto r = t.route_gpus(0, b);
    const auto& hop = t.graph().link(r.links[r.links.size() / 2]);
    if (t.graph().device(hop.src).tier == 2) spines.insert(hop.src);
  }
  EXPECT_GT(spines.size(), 4u);
}

TEST(FatTree, ThreeTiersForSixteenThousandGpus) {
  const auto t = preset("dgx-h100", fabric(2048, topo::FabricKind::fat_tree, 3));
  const auto& s = t.fabric()->shape();
  EXPECT_EQ(s.tiers, 3);
  EXPECT_EQ(s.leaves, 512);
  EXPECT_EQ(s.pods, 16);
  for (long b : {8L, 8L * 5, 8L * 200, 16383L}) {
    const auto r = t.route_gpus(0, b);
    EXPECT_TRUE(connected(t.graph(), r, t.gpu(0), t.gpu(b))) << b;
  }
  EXPECT_EQ(t.route_gpus(0, 8 * 200).links.size(), 10u);  // PCIe, NIC, leaf, agg, core, agg, leaf, NIC, PCIe
}

TEST(FatTree, TooManyNodesForTheRadixIsAClearError) {
  const std::string two = input_error([] { (void)preset("dgx-h100", fabric(512, topo::FabricKind::fat_tree, 2)); });
  EXPECT_NE(two.find("holds at most 64 leaves"), std::string::npos) << two;
  EXPECT_NE(two.find("field '--tiers'"), std::string::npos) << two;
  EXPECT_NE(two.find("3 tiers"), std::string::npos) << two;
  const std::string three = input_error([] { (void)preset("dgx-h100", fabric(12500, topo::FabricKind::fat_tree, 3)); });
  EXPECT_NE(three.find("pods"), std::string::npos) << three;
  const std::string single = input_error([] { (void)preset("dgx-h100", fabric(16, topo::FabricKind::single)); });
  EXPECT_NE(single.find("64 ports"), std::string::npos) << single;
}

TEST(FatTree, OneHundredThousandGpusBuild) {
  // 12,500 DGX H100 with 4 NICs each = 50,000 ports: fits a radix-64 three-tier fat-tree.
  topo::ClusterOverrides o = fabric(12500, topo::FabricKind::fat_tree, 3);
  o.nics_per_node = 4;
  const auto t = preset("dgx-h100", o);
  EXPECT_EQ(t.gpu_count(), 100000);
  const auto r = t.route_gpus(0, 99999);
  EXPECT_TRUE(connected(t.graph(), r, t.gpu(0), t.gpu(99999)));
  EXPECT_EQ(r.type, topo::PathType::net);
}

TEST(FatTree, GpuLimitIsAClearError) {
  topo::ClusterOverrides o = fabric(12501, topo::FabricKind::fat_tree, 3);
  const std::string msg = input_error([&] { (void)preset("dgx-h100", o); });
  EXPECT_NE(msg.find("at most 100000 GPUs"), std::string::npos) << msg;
}

TEST(Rail, EachRailHasItsOwnLeaf) {
  const auto t = preset("dgx-h100", fabric(32, topo::FabricKind::rail));
  const auto& f = *t.fabric();
  EXPECT_EQ(f.shape().leaves, 8);
  for (long n = 0; n < 32; ++n) {
    for (int r = 0; r < 8; ++r) EXPECT_EQ(f.leaf_of(n, r), r);
  }
  // Same rail: one leaf hop. Other rail: through a spine.
  EXPECT_EQ(t.route_gpus(0, 31 * 8).ecmp_paths, 1);
  EXPECT_GT(t.route_gpus(0, 31 * 8 + 7).ecmp_paths, 1);
}

TEST(Single, SmallClusterOnOneSwitch) {
  const auto t = preset("dgx-a100", fabric(4, topo::FabricKind::single));
  EXPECT_EQ(t.fabric()->shape().tiers, 1);
  const auto r = t.route_gpus(0, 3 * 8 + 1);
  EXPECT_EQ(r.links.size(), 2u + t.route_gpu_to_nic(0, t.node().nic_of_gpu(0)).links.size() * 2);
  // HDR: 200 Gb/s line per NIC.
  EXPECT_NEAR(in_GBps(r.line_rate), 25.0, 1e-6);
}

TEST(NicSpread, PxnGpusLoadEveryNicAlikeSoARingReachesAllFourNics) {
  // dgx-h100 with 4 of its 8 NICs: GPUs 1, 3, 5, 7 send through PXN over NVLink to any of the
  // four. Their channels must spread over all four NICs, or two NICs carry three times the
  // others' channels and the ring reaches 2/3 of the NICs' rate (126 of 190 GB/s).
  for (const char* name : {"dgx-h100", "dgx-a100"}) {
    topo::ClusterOverrides o;
    o.nodes = 2;
    o.nics_per_node = 4;
    const auto t = preset(name, o);
    const comm::Communicator c(t, 0);
    comm::CollectiveRequest r;
    r.op = comm::Op::all_reduce;
    r.size = 8.0 * 1073741824.0;
    r.algo = comm::Algo::ring;
    const double busbw = comm::predict(c, r).busbw_GBps;
    const double nics = 4 * in_GBps(t.fabric()->nic_line_rate()) * t.network().efficiency;
    EXPECT_GT(busbw, 0.97 * nics) << name;
    EXPECT_LT(busbw, 1.001 * nics) << name;
  }
}

}  // namespace
}  // namespace gf
