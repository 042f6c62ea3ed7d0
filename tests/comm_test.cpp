#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "comm/algorithm.hpp"
#include "comm/algorithms/p2p_schedule.hpp"
#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "comm/nccl_params.hpp"
#include "comm/pattern.hpp"
#include "test_support.hpp"

using gf::test::catalog;
using gf::test::input_error;
using gf::test::preset;

namespace gf::comm {
namespace {

topo::ClusterOverrides nodes(long n, topo::FabricKind f = topo::FabricKind::fat_tree, int tiers = 2) {
  topo::ClusterOverrides o;
  o.nodes = n;
  o.fabric = f;
  o.tiers = tiers;
  return o;
}

CollectiveResult run(const Communicator& c, Op op, double size, std::optional<Algo> algo = {},
                     std::optional<Proto> proto = {}, Engine e = Engine::automatic) {
  CollectiveRequest r;
  r.op = op;
  r.size = size;
  r.algo = algo;
  r.proto = proto;
  r.engine = e;
  return predict(c, r);
}

// The registry holds one object per Algo, in the enum's order, and names come from it.
TEST(AlgorithmRegistry, OneObjectPerAlgoInEnumOrder) {
  ASSERT_EQ(all_algorithms().size(), kAlgoCount);
  for (std::size_t i = 0; i < kAlgoCount; ++i) {
    const auto a = static_cast<Algo>(i);
    EXPECT_EQ(algorithm(a).id(), a);
    EXPECT_EQ(all_algorithms()[i], &algorithm(a));
    if (algorithm(a).traits().forceable) {
      EXPECT_EQ(parse_algo(to_string(a)), a);
    }
  }
  EXPECT_EQ(parse_algo("P2P"), std::nullopt);  // the operation selects point-to-point
  EXPECT_EQ(parse_algo("collnet"), Algo::collnet_direct);
  EXPECT_EQ(algo_name_list(" or "), "Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT or Hierarchical");
  EXPECT_EQ(algo_name_list(", or ", true),
            "Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT, or Hierarchical (gpufabric's own)");
}

TEST(BusBandwidth, FactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::reduce_scatter, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::alltoall, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::sendrecv, 8), 1.0);
}

TEST(Parameters, NcclTablesLoad) {
  const auto& p = nccl_params();
  EXPECT_DOUBLE_EQ(p.base_us(Algo::ring, Proto::simple), 8.4);
  EXPECT_DOUBLE_EQ(p.hop_us(HopKind::net, Algo::tree, Proto::ll), 5.0);
  EXPECT_DOUBLE_EQ(p.payload[static_cast<int>(Proto::ll)], 0.5);
  EXPECT_FALSE(p.source.empty());
  EXPECT_FALSE(p.calibration_source.empty());
}

// The closed form and the flow engine agree wherever the traffic is symmetric.
TEST(Engines, ClosedFormAgreesWithFlowEngine) {
  struct Shape {
    const char* preset;
    long nodes;
    topo::FabricKind fabric;
    int tiers;
  };
  const std::vector<Shape> shapes = {
      {"dgx-h100", 1, topo::FabricKind::single, 2},     {"dgx-a100", 1, topo::FabricKind::single, 2},
      {"pcie-8x-h100", 1, topo::FabricKind::single, 2}, {"pcie-4x-rtx4090", 1, topo::FabricKind::single, 2},
      {"dgx1-v100", 1, topo::FabricKind::single, 2},    {"hgx-h100-4gpu", 1, topo::FabricKind::single, 2},
      {"dgx-h100", 4, topo::FabricKind::single, 2},     {"dgx-h100", 16, topo::FabricKind::fat_tree, 2},
      {"dgx-a100", 8, topo::FabricKind::fat_tree, 2},   {"dgx-h100", 32, topo::FabricKind::rail, 2},
      {"aws-p5", 4, topo::FabricKind::fat_tree, 2},     {"dgx-h100", 80, topo::FabricKind::fat_tree, 3},
  };
  const std::vector<std::pair<Op, Algo>> patterns = {{Op::all_reduce, Algo::ring},     {Op::all_gather, Algo::ring},
                                                     {Op::reduce_scatter, Algo::ring}, {Op::broadcast, Algo::ring},
                                                     {Op::alltoall, Algo::p2p},        {Op::sendrecv, Algo::p2p}};
  int compared = 0;
  for (const auto& s : shapes) {
    const auto t = preset(s.preset, nodes(s.nodes, s.fabric, s.tiers));
    const Communicator c(t, 0);
    for (const auto& [op, algo] : patterns) {
      for (double size : {1 << 20, 1 << 30}) {
        const double flow = data_time(c, op, algo, Proto::simple, size, Engine::flow).value();
        const double closed = data_time(c, op, algo, Proto::simple, size, Engine::analytic).value();
        ASSERT_GT(flow, 0) << s.preset << " " << to_string(op);
        EXPECT_NEAR(closed / flow, 1.0, 0.02) << s.preset << " x" << s.nodes << " " << to_string(op) << " " << size
                                              << ": closed " << closed << " flow " << flow;
        ++compared;
      }
    }
    if (t.node().nvswitch_sharp() && s.nodes == 1) {
      const double flow = data_time(c, Op::all_reduce, Algo::nvls, Proto::simple, 1 << 30, Engine::flow).value();
      const double closed = data_time(c, Op::all_reduce, Algo::nvls, Proto::simple, 1 << 30, Engine::analytic).value();
      EXPECT_NEAR(closed / flow, 1.0, 0.02) << s.preset << " NVLS";
    }
  }
  EXPECT_GE(compared, 100);
}

TEST(Hierarchical, ThreePhasesRunOneAfterAnother) {
  const auto t = preset("dgx-h100", nodes(16));
  const Communicator c(t, 0);
  const double size = 1 << 30;
  const double flow = data_time(c, Op::all_reduce, Algo::hierarchical, Proto::simple, size, Engine::flow).value();
  const double closed = data_time(c, Op::all_reduce, Algo::hierarchical, Proto::simple, size, Engine::analytic).value();
  EXPECT_NEAR(closed / flow, 1.0, 0.02);
  // Intra-node reduce-scatter and all-gather at one GPU's NVLink rate, plus the per-rail ring
  // across nodes at one NIC's rate: the phases add up.
  const double nvlink = 18 * 25e9 * nccl_params().nvlink_efficiency.at(4);
  const double nic = 50e9 * catalog().network("ib-ndr").efficiency;
  const double expected = 2 * (7.0 / 8) * size / nvlink + 2.0 * 15 / 16 * size / 8 / nic;
  EXPECT_NEAR(flow / expected, 1.0, 0.02);
  // Not an NCCL algorithm: the tuner never picks it on its own.
  EXPECT_NE(run(c, Op::all_reduce, size).algo, Algo::hierarchical);
  EXPECT_EQ(run(c, Op::all_reduce, size, Algo::hierarchical).algo, Algo::hierarchical);
}

TEST(Ring, MeshRingsStayOnNvlinkAndSpreadOverLinks) {
  // DGX-1: a hybrid cube-mesh, where some GPU pairs have no NVLink. NCCL's rings use only
  // NVLink hops, and different channels take different cycles.
  const auto t = preset("dgx1-v100");
  const Communicator c(t, 0);
  EXPECT_TRUE(c.nvlink_intra());
  std::set<std::vector<int>> cycles;
  for (int ch = 0; ch < channels(c, Algo::ring); ++ch) {
    const auto& ring = c.intra_ring(ch);
    cycles.insert(ring);
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const auto r = t.node().gpu_to_gpu(ring[i], ring[(i + 1) % ring.size()], true);
      EXPECT_EQ(r.transport, topo::Transport::nvlink) << ring[i] << "->" << ring[(i + 1) % ring.size()];
    }
  }
  EXPECT_GE(cycles.size(), 2u);
  // Several cycles together carry more than one NVLink 2 link's worth.
  const auto r = run(c, Op::all_reduce, 1 << 30, Algo::ring, Proto::simple);
  EXPECT_GT(r.busbw_GBps, 2 * 25.0 * nccl_params().nvlink_efficiency.at(2));
}

TEST(Ring, NvswitchRingRunsAtNcclsNvlinkRate) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  const auto r = run(c, Op::all_reduce, 8.0 * (1 << 30), Algo::ring, Proto::simple);
  // busbw of a ring all_reduce is one GPU's NVLink rate at NCCL's SM-copy efficiency.
  const double expected = 18 * 25.0 * nccl_params().nvlink_efficiency.at(4);
  EXPECT_NEAR(r.busbw_GBps, expected, 0.01 * expected);
}

TEST(CollNet, ChainRunsThroughTheNodesRanksNotNvls) {
  // CollNetChain on 8 nodes of 8 x H100 (SHARP InfiniBand): each rank but the chain's two ends
  // sends every byte twice over NVLink (reduce up the chain, broadcast down), so per rank
  // 2 (p - 1) / p of the message leaves over NVLink; the NICs carry it once. algbw is one GPU's
  // NVLink rate x p / (2 (p - 1)), not NVLS's.
  const auto t = preset("dgx-h100", nodes(8));
  const Communicator c(t, 0);
  ASSERT_TRUE(c.sharp_capable());
  const double size = 8.0 * (1 << 30);
  const double nvlink = 18 * 25.0e9 * nccl_params().nvlink_efficiency.at(4);
  const double expected = size / (nvlink * 8.0 / 14.0);
  for (const Engine e : {Engine::flow, Engine::analytic}) {
    const double data = data_time(c, Op::all_reduce, Algo::collnet_chain, Proto::simple, size, e).value();
    EXPECT_NEAR(data / expected, 1.0, 0.02) << to_string(e);
  }
  // CollNetDirect reduces through NVLS inside the node, so it is faster here.
  EXPECT_LT(data_time(c, Op::all_reduce, Algo::collnet_direct, Proto::simple, size, Engine::flow).value(),
            0.8 * expected);
}

TEST(CollNet, SharpPortsRunAtTheSwitchsAggregationRate) {
  // On 2 x 8 B200 over NDR the chain's NVLink legs are fast (8/14 of one GPU's NVLink5 rate is
  // ~430 GB/s algbw); the NICs carry each node's share once, up to the switch and back, at the
  // rate SHARP aggregates (Quantum-2: 0.705 of the 50 GB/s port), not at the 0.95 that RDMA
  // reaches on the same port.
  const auto t = preset("dgx-b200", nodes(2));
  const Communicator c(t, 0);
  ASSERT_TRUE(c.sharp_capable());
  const double sharp = t.network_switch().sharp_efficiency;
  ASSERT_GT(sharp, 0.0);
  ASSERT_LT(sharp, t.network().efficiency);
  const double size = 16.0 * (1 << 30);
  const double expected = size / (t.node().nics() * t.network().data_rate.value() * sharp);
  for (const Engine e : {Engine::flow, Engine::analytic}) {
    const double data = data_time(c, Op::all_reduce, Algo::collnet_chain, Proto::simple, size, e).value();
    EXPECT_NEAR(data / expected, 1.0, 0.02) << to_string(e);
  }
}

TEST(CollNet, DirectAllGatherRunsEachRailThroughItsSwitch) {
  // One rank per NIC: each NIC sends its rank's block up once and receives the rail's blocks of
  // every node (its own node's too) from the switch, which replicates them at the port's rate
  // (nothing is reduced, so SHARP's aggregation rate does not apply). A NIC's downlink carries
  // size / ranks-per-node whatever the node count.
  const double size = 16.0 * (1 << 30);
  std::optional<double> first;
  for (const long n : {2L, 4L}) {
    const auto t = preset("dgx-b200", nodes(n));
    const Communicator c(t, 0);
    ASSERT_TRUE(algorithm(Algo::collnet_direct).available(c, Op::all_gather, false));
    const double expected = size / c.ranks_per_node() / (t.network().data_rate.value() * t.network().efficiency);
    for (const Engine e : {Engine::flow, Engine::analytic}) {
      const double data = data_time(c, Op::all_gather, Algo::collnet_direct, Proto::simple, size, e).value();
      EXPECT_NEAR(data / expected, 1.0, 0.02) << n << " nodes, " << to_string(e);
      if (!first) first = data;
      EXPECT_NEAR(data / *first, 1.0, 0.01) << n << " nodes, " << to_string(e);
    }
    // Forced, it runs as itself: all_gather has no type for NVLink SHARP to refuse.
    const CollectiveResult r = run(c, Op::all_gather, size, Algo::collnet_direct);
    EXPECT_EQ(r.algo, Algo::collnet_direct);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
    // reduce_scatter reduces in the switch: the rail's partial blocks go up at SHARP's rate.
    const double rs = data_time(c, Op::reduce_scatter, Algo::collnet_direct, Proto::simple, size, Engine::flow).value();
    EXPECT_NEAR(rs / expected, t.network().efficiency / t.network_switch().sharp_efficiency, 0.03);
  }
}

TEST(CollNet, DirectAllGatherNeedsARankPerNic) {
  // "AllGather/ReduceScatter requires 1:1 GPU:NIC" (tuning.cc): with 4 NICs for 8 GPUs, NCCL
  // runs Ring instead and says so; one node has no switch to reduce in.
  auto o = nodes(2);
  o.nics_per_node = 4;
  const auto half = preset("dgx-b200", o);
  const Communicator c(half, 0);
  EXPECT_FALSE(algorithm(Algo::collnet_direct).available(c, Op::all_gather, true));
  const CollectiveResult r = run(c, Op::all_gather, 1 << 30, Algo::collnet_direct);
  EXPECT_EQ(r.algo, Algo::ring);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.front().find("falls back to Ring"), std::string::npos) << r.warnings.front();
  EXPECT_FALSE(algorithm(Algo::collnet_direct).available(Communicator(preset("dgx-b200"), 0), Op::all_gather, true));
  EXPECT_FALSE(
      algorithm(Algo::collnet_direct).available(Communicator(preset("dgx-b200", nodes(2)), 0), Op::alltoall, true));
}

TEST(CollNet, TunedInOnlyWithCollnetEnable) {
  // NCCL_COLLNET_ENABLE=0 by default: no CollNet candidate at any size. With it set, NCCL's
  // tuner weighs CollNet against the rest, with its own figures.
  const auto t = preset("dgx-b200", nodes(4));
  auto has_collnet = [](const std::vector<std::pair<Algo, Proto>>& cands) {
    return std::any_of(cands.begin(), cands.end(), [](const auto& ap) {
      return ap.first == Algo::collnet_direct || ap.first == Algo::collnet_chain;
    });
  };
  for (const Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter}) {
    EXPECT_FALSE(has_collnet(candidates(Communicator(t, 0), op))) << to_string(op);
    NcclConfig env;
    apply_nccl_assignment(env, "NCCL_COLLNET_ENABLE=1", nullptr);
    EXPECT_TRUE(has_collnet(candidates(Communicator(t, 0, env), op))) << to_string(op);
  }
  NcclConfig env;
  EXPECT_THROW(apply_nccl_assignment(env, "NCCL_COLLNET_ENABLE=maybe", nullptr), gf::InputError);
}

TEST(Protocols, EfaV1LeavesOnlySimpleAcrossNodes) {
  // aws-ofi-nccl sets NCCL_PROTO=simple on EFA v1 (p3dn, p4d): across nodes every candidate is
  // Simple; inside one node NCCL keeps LL and LL128.
  const auto multi = preset("aws-p4d", nodes(2, topo::FabricKind::single));
  const Communicator c(multi, 0);
  ASSERT_FALSE(multi.network_ll_protocols());
  for (const auto& [a, p] : candidates(c, Op::all_reduce)) EXPECT_EQ(p, Proto::simple) << to_string(a);
  EXPECT_EQ(run(c, Op::all_reduce, 8).proto, Proto::simple);
  const auto single = preset("aws-p4d");
  const Communicator one(single, 0);
  EXPECT_EQ(run(one, Op::all_reduce, 8).proto, Proto::ll);
  // P5's EFA keeps them.
  const auto p5 = preset("aws-p5", nodes(2, topo::FabricKind::single));
  EXPECT_TRUE(p5.network_ll_protocols());
  EXPECT_NE(run(Communicator(p5, 0), Op::all_reduce, 8).proto, Proto::simple);
}

TEST(Channels, NvswitchNodesOpenWhatNcclPrints) {
  // "24 coll channels" on A100 and H100 nodes, 32 on B200; a mesh or PCIe node keeps its link
  // count; across nodes two per NIC.
  EXPECT_EQ(channels(Communicator(preset("dgx-a100"), 0), Algo::ring), 24);
  EXPECT_EQ(channels(Communicator(preset("dgx-h100"), 0), Algo::ring), 24);
  EXPECT_EQ(channels(Communicator(preset("dgx-b200"), 0), Algo::ring), 32);
  EXPECT_EQ(channels(Communicator(preset("dgx1-v100"), 0), Algo::ring), 6);
  EXPECT_EQ(channels(Communicator(preset("dgx-h100", nodes(2)), 0), Algo::ring), 16);
}

TEST(Channels, PcieNodesKeepTheirTwoChannelsAcrossNodes) {
  // A ring across PCIe nodes threads every GPU of each node, so the node's PCIe and socket links
  // hold NCCL's search to what it finds inside one node (no duplication below 25 GB/s): two
  // channels, not two per NIC. So the node's SHM hops run no faster across nodes than inside one,
  // and a 25 MiB all-reduce over two or sixteen 8-GPU PCIe servers is not much faster than over one.
  const auto one = preset("pcie-8x-h100");
  EXPECT_EQ(channels(Communicator(one, 0), Algo::ring), 2);
  const double inside = run(Communicator(one, 0), Op::all_reduce, 25.0 * (1 << 20)).time.value();
  for (long n : {2L, 16L}) {
    const auto many = preset("pcie-8x-h100", nodes(n));
    const Communicator c(many, 0);
    EXPECT_EQ(channels(c, Algo::ring), 2) << n;
    // (Within 10%: across nodes NCCL runs Tree, whose chain carries the data once each way
    // where the ring carries 2 (n - 1) / n of it; with the fill its first chunk's trip
    // (src/comm/stage_fill) the tree is 1-6% faster than the node's ring.)
    EXPECT_GE(run(c, Op::all_reduce, 25.0 * (1 << 20)).time.value(), 0.9 * inside) << n;
  }
  // One GPU per node has no node to thread: two channels per NIC, as on NVLink nodes.
  auto single = preset("pcie-8x-h100", nodes(2));
  const Communicator lone(single, std::vector<long>{0, 8});
  EXPECT_EQ(channels(lone, Algo::ring), 2 * lone.nics_per_node());
  EXPECT_GT(lone.nics_per_node(), 1);
}

TEST(Engines, TreesFollowNcclsDoubleBinaryTreeInBothEngines) {
  // NCCL's binary tree (ncclGetBtree) is rooted at 0 with its interior nodes on even indices: on
  // 4 nodes, 0 -> 2 -> {1, 3}, and the mirrored second tree 3 -> 1 -> {2, 0}. Nodes 1 and 2 have
  // a parent and two children in one tree and a parent in the other, so their NICs carry twice
  // what a 2-node tree's do, as on 8 or 13 nodes; 3 nodes make two chains (1.5 times).
  for (const Algo algo : {Algo::tree, Algo::nvls_tree}) {
    auto time = [&](long n, Engine e) {
      const auto t = preset("dgx-b200", nodes(n));  // NVLink 5: the NICs bind, not the chain
      return data_time(Communicator(t, 0), Op::all_reduce, algo, Proto::simple, 1 << 30, e).value();
    };
    const double two = time(2, Engine::flow);
    EXPECT_NEAR(time(3, Engine::flow) / two, 1.5, 0.01) << to_string(algo);
    for (const long n : {4L, 5L, 8L, 13L}) {
      EXPECT_NEAR(time(n, Engine::flow) / two, 2.0, 0.01) << to_string(algo) << " x" << n;
      EXPECT_NEAR(time(n, Engine::analytic) / time(n, Engine::flow), 1.0, 0.01) << to_string(algo) << " x" << n;
    }
  }
  // On an 8:1 leaf the uplinks bind, and the tree's leaves differ: the closed form sums the
  // leaf the most tree edges cross (the flow engine sees every leaf).
  topo::ClusterOverrides o = nodes(32);
  o.oversubscription = 8;
  const auto thin = preset("dgx-h100", o);
  const Communicator c(thin, 0);
  const auto flat = preset("dgx-h100", nodes(32));
  const Communicator cf(flat, 0);
  for (const Algo algo : {Algo::tree, Algo::nvls_tree}) {
    const double flow = data_time(c, Op::all_reduce, algo, Proto::simple, 1 << 30, Engine::flow).value();
    const double closed = data_time(c, Op::all_reduce, algo, Proto::simple, 1 << 30, Engine::analytic).value();
    const double idle = data_time(cf, Op::all_reduce, algo, Proto::simple, 1 << 30, Engine::analytic).value();
    EXPECT_GT(flow, 1.5 * idle) << to_string(algo);
    EXPECT_NEAR(closed / flow, 1.0, 0.15) << to_string(algo) << ": closed " << closed << " flow " << flow;
  }
}

TEST(Engines, TreesRunNoFasterThanNcclsPerChannelCeiling) {
  // Together's use3a-ss B200 cluster measures forced Tree all_reduce at 16 GiB at 335 GB/s busbw
  // on 2 nodes and 191-194 from 4 to 46 nodes, against ~650 and ~345 that its NICs would carry:
  // the tree kernel's own ceiling, NCCL's perChMaxTreeBws (42.8 and 24 GB/s per search channel
  // on Blackwell, 8 search channels here).
  for (const long n : {2L, 8L}) {
    const auto t = preset("dgx-b200", nodes(n));
    const Communicator c(t, 0);
    const auto r = run(c, Op::all_reduce, 16.0 * (1 << 30), Algo::tree, Proto::simple);
    const double per_channel = n == 2 ? 42.8 : 24.0;
    const double ceiling = 0.5 * 8 * per_channel * 2.0 * (c.ranks() - 1) / c.ranks();  // as busbw
    EXPECT_LE(r.busbw_GBps, ceiling * 1.001) << n << " nodes";
    EXPECT_GE(r.busbw_GBps, ceiling * 0.97) << n << " nodes";
  }
}

TEST(Tuner, CapsPerChannelFiguresByTheSearchGraphsChannels) {
  // NCCL multiplies its per-channel caps by graphs[a]->nChannels, the searched channels, which
  // ncclTopoPostset then duplicates: on 2 DGX A100 (8 HDR NICs, 16 channels run) Tree's
  // bandwidth is at most 8 x 23.6 GB/s (x 0.5 as algbw), below Ring's 8 NICs x 24 GB/s x 16/30,
  // so NCCL runs Ring for bulk all_reduce there and Tree at medium sizes, where its latency wins.
  const auto t = preset("dgx-a100", nodes(2));
  const Communicator c(t, 0);
  EXPECT_EQ(channels(c, Algo::tree), 16);
  EXPECT_EQ(run(c, Op::all_reduce, 1 << 30).algo, Algo::ring);
  EXPECT_EQ(run(c, Op::all_reduce, 4 << 20).algo, Algo::tree);
}

TEST(Tuner, ChoosesLikeNccl) {
  const auto h100 = preset("dgx-h100");
  const Communicator c(h100, 0);
  EXPECT_EQ(run(c, Op::all_reduce, 8).proto, Proto::ll);                // latency-bound: LL
  EXPECT_EQ(run(c, Op::all_reduce, 8.0 * (1 << 30)).algo, Algo::nvls);  // NVLink SHARP for bulk
  EXPECT_EQ(run(c, Op::all_gather, 1 << 30).algo, Algo::ring);
  const auto a100 = preset("dgx-a100");
  const Communicator ca(a100, 0);
  EXPECT_NE(run(ca, Op::all_reduce, 1 << 30).algo, Algo::nvls);  // NVSwitch gen 2 has no NVLS
  const auto pcie = preset("pcie-8x-l40s");
  const Communicator cp(pcie, 0);
  const auto big = run(cp, Op::all_reduce, 1 << 30);
  EXPECT_EQ(big.algo, Algo::ring);
  EXPECT_NE(big.proto, Proto::ll128);  // NCCL enables LL128 only over NVLink
  const auto multi = preset("dgx-h100", nodes(4));
  const Communicator cm(multi, 0);
  EXPECT_EQ(run(cm, Op::all_reduce, 8.0 * (1 << 30)).algo, Algo::nvls_tree);
}

TEST(Tuner, BusBandwidthGrowsWithSizeAndSaturates) {
  const auto t = preset("dgx-a100");
  const Communicator c(t, 0);
  double last = 0;
  for (double s = 1024; s <= 8.0 * (1 << 30); s *= 8) {
    const double bw = run(c, Op::all_reduce, s).busbw_GBps;
    EXPECT_GE(bw, last * 0.999) << s;
    last = bw;
  }
  EXPECT_NEAR(last, 300 * nccl_params().nvlink_efficiency.at(3), 10.0);
}

TEST(Forcing, HardwareThatCannotRunAnAlgorithmIsAnError) {
  const auto a100 = preset("dgx-a100");
  const Communicator c(a100, 0);
  std::string msg = input_error([&] { (void)run(c, Op::all_reduce, 1 << 20, Algo::nvls); });
  EXPECT_NE(msg.find("NVLink SHARP"), std::string::npos) << msg;
  const auto roce = preset("dgx-h100", [] {
    auto o = nodes(2);
    o.network = "roce-400g";
    return o;
  }());
  const Communicator cr(roce, 0);
  msg = input_error([&] { (void)run(cr, Op::all_reduce, 1 << 20, Algo::collnet_direct); });
  EXPECT_NE(msg.find("SHARP"), std::string::npos) << msg;
}

TEST(Forcing, AlgorithmsNcclWouldFallBackFromWarn) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  const auto r = run(c, Op::all_gather, 1 << 20, Algo::tree);
  EXPECT_EQ(r.algo, Algo::ring);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.front().find("falls back to Ring"), std::string::npos) << r.warnings.front();
  const auto nvls_ll = run(c, Op::all_reduce, 1 << 20, Algo::nvls, Proto::ll);
  EXPECT_EQ(nvls_ll.proto, Proto::simple);
  EXPECT_FALSE(nvls_ll.warnings.empty());
  const auto sendrecv = run(c, Op::sendrecv, 1 << 20, Algo::ring);
  EXPECT_FALSE(sendrecv.warnings.empty());
}

TEST(Communicator, RanksMustFitAndSpreadEvenly) {
  const auto t = preset("dgx-h100", nodes(2));
  EXPECT_EQ(Communicator(t, 0).ranks(), 16);
  EXPECT_EQ(Communicator(t, 2).ranks_per_node(), 1);
  EXPECT_NE(input_error([&] { Communicator c(t, 17); }).find("cluster has 16 GPUs"), std::string::npos);
  EXPECT_NE(input_error([&] { Communicator c(t, 3); }).find("spread evenly"), std::string::npos);
}

TEST(DataPath, NoP2pAndNoGpuDirectCostBandwidth) {
  auto off = nodes(1);
  off.p2p = false;
  const auto staged = preset("dgx-h100", off);
  const auto direct = preset("dgx-h100");
  EXPECT_LT(run(Communicator(staged, 0), Op::all_reduce, 1 << 30).busbw_GBps,
            run(Communicator(direct, 0), Op::all_reduce, 1 << 30).busbw_GBps / 4);
  // Brief case 6: gigabit Ethernet cannot carry gradient synchronization.
  auto gige = nodes(2);
  gige.network = "eth-1g";
  gige.nics_per_node = 1;  // a gigabit server has one port
  const auto slow = preset("dgx-h100", gige);
  const auto fast = preset("dgx-h100", nodes(2));
  const double slow_bw = run(Communicator(slow, 0), Op::all_reduce, 1 << 30).busbw_GBps;
  const double fast_bw = run(Communicator(fast, 0), Op::all_reduce, 1 << 30).busbw_GBps;
  EXPECT_LT(slow_bw, 0.25);  // 1 Gb/s = 0.125 GB/s on the wire
  EXPECT_GT(fast_bw / slow_bw, 1000);
}

TEST(Alltoall, NcclsScheduleOfPeersFollowsItsPlanner) {
  // 10 DGX H100 nodes, 80 ranks: the 2 channels per network peer halve to 1 (2 x ceil(80 / 8)
  // batches > 16 p2p channels), so 16 channels x 8 ops per batch hold every peer in one wave.
  const auto t10 = preset("dgx-h100", nodes(10));
  const Communicator c10(t10, 0);
  const P2pSchedule s = p2p_schedule(c10, Op::alltoall, 32.0 * (1 << 20));
  EXPECT_EQ(s.peers, 79);
  EXPECT_EQ(s.remote_peers, 72);
  EXPECT_EQ(s.channels, 16);
  EXPECT_EQ(s.channels_per_op, 1);
  EXPECT_EQ(s.concurrent, 128);
  EXPECT_EQ(s.waves, 1);
  // 8,192 ranks: 64 waves of 128 peers.
  const auto big = preset("dgx-h100", nodes(1024, topo::FabricKind::fat_tree, 3));
  const Communicator cb(big, 0);
  EXPECT_EQ(p2p_schedule(cb, Op::alltoall, 65536).waves, 64);
  // One node: 32 channels, every peer at once and no network posts.
  const auto one = preset("dgx-h100");
  const Communicator c1(one, 0);
  const P2pSchedule s1 = p2p_schedule(c1, Op::alltoall, 65536);
  EXPECT_EQ(s1.remote_peers, 0);
  EXPECT_EQ(s1.waves, 1);
  EXPECT_EQ(p2p_schedule_latency_us(c1, Op::alltoall, Proto::ll, 65536), 0.0);
}

TEST(Alltoall, SmallMessagesTakeLongerWithMoreRanks) {
  // Every rank posts a send and a receive to each peer on another node, and the channels take
  // the peers in waves: 64 KiB no longer takes the same time on 16 and 8,192 ranks.
  double last = 0;
  for (const long n : {2L, 8L, 64L, 1024L}) {
    const auto t = preset("dgx-h100", nodes(n, topo::FabricKind::fat_tree, n > 64 ? 3 : 2));
    const Communicator c(t, 0);
    const double now = run(c, Op::alltoall, 65536, {}, {}, Engine::analytic).time.value();
    EXPECT_GT(now, last * 1.5) << n << " nodes";
    last = now;
  }
  // 2 x 8,184 remote posts at NCCL's 1 us (Intel) alone: beyond 16 ms at 8,192 ranks.
  EXPECT_GT(last, 16e-3);
}

TEST(Determinism, SameRequestSameAnswer) {
  const auto t = preset("dgx-h100", nodes(8));
  const Communicator c(t, 0);
  const auto a = run(c, Op::alltoall, 1 << 28, {}, {}, Engine::flow);
  const auto b = run(c, Op::alltoall, 1 << 28, {}, {}, Engine::flow);
  EXPECT_EQ(a.time.value(), b.time.value());
}

}  // namespace
}  // namespace gf::comm
