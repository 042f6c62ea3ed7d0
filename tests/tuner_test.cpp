// NCCL's tuner and the reported time: curves behave like nccl-tests (no time falling as the size
// grows for a fixed choice, no busbw dips unless the tuner changes its choice), and the fabric's
// oversubscription, which NCCL's tuner does not know, changes only the time.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "comm/model.hpp"
#include "comm/nccl_params.hpp"
#include "comm/nccl_tuner.hpp"
#include "comm/pattern.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

struct Case {
  const char* preset;
  long nodes;
};

// A spread of machines: NVSwitch nodes alone and on fat-trees, PCIe boxes with and without P2P,
// a direct-NVLink mesh, cloud nodes with EFA.
const std::vector<Case> kCases = {
    {"dgx-h100", 1},      {"dgx-h100", 16},       {"dgx-a100", 4},     {"dgx-b200", 2},  {"pcie-2x-rtx2080ti", 16},
    {"pcie-8x-h100", 16}, {"pcie-4x-rtx4090", 1}, {"pcie-8x-l40s", 2}, {"dgx1-v100", 1}, {"aws-p4d", 4},
};

topo::ClusterOverrides shape(long nodes, double oversubscription = 1) {
  topo::ClusterOverrides o;
  o.nodes = nodes;
  if (nodes > 1) {
    o.fabric = topo::FabricKind::fat_tree;
    o.tiers = 2;
    o.oversubscription = oversubscription;
  }
  return o;
}

std::vector<double> sizes() {
  std::vector<double> out;
  for (double s = 8; s <= 1073741824.0; s *= 2) out.push_back(s);
  return out;
}

CollectiveResult run(const Communicator& c, Op op, double size, std::optional<Algo> a = {},
                     std::optional<Proto> p = {}) {
  CollectiveRequest r;
  r.op = op;
  r.size = size;
  r.algo = a;
  r.proto = p;
  r.engine = Engine::analytic;
  return predict(c, r);
}

TEST(TunerCurves, TimeNeverFallsAsTheSizeGrowsForAFixedChoice) {
  for (const auto& k : kCases) {
    const auto t = preset(k.preset, shape(k.nodes));
    const Communicator c(t, 0);
    for (const Op op : {Op::all_reduce, Op::all_gather}) {
      for (const auto& [a, p] : candidates(c, op)) {
        double last = 0;
        for (const double s : sizes()) {
          const double now = run(c, op, s, a, p).time.value();
          EXPECT_GE(now, last * (1 - 1e-9)) << k.preset << " x" << k.nodes << " " << to_string(op) << " "
                                            << to_string(a) << "/" << to_string(p) << " at " << s << " B";
          last = now;
        }
      }
    }
  }
}

TEST(TunerCurves, BusBandwidthDipsOnlyWhereTheTunerChangesItsChoice) {
  for (const auto& k : kCases) {
    const auto t = preset(k.preset, shape(k.nodes));
    const Communicator c(t, 0);
    for (const Op op : {Op::all_reduce, Op::all_gather, Op::reduce_scatter, Op::broadcast}) {
      CollectiveResult last;
      bool first = true;
      for (const double s : sizes()) {
        const auto r = run(c, op, s);
        if (!first && r.algo == last.algo && r.proto == last.proto) {
          // Same algorithm and protocol: busbw grows with the size, up to a few percent of
          // noise from NCCL's chunk-size steps (the pipeline fill grows with the chunk), and
          // where NCCL's own measured tree efficiency falls between the two sizes
          // (treeCorrectionFactor in tuning.cc), by that much more.
          double allowed = 0.97;
          if (r.algo == Algo::tree && op == Op::all_reduce)
            allowed *= std::min(1.0, nccl_tree_correction(c, r.proto, s) / nccl_tree_correction(c, r.proto, s / 2));
          EXPECT_GE(r.busbw_GBps, last.busbw_GBps * allowed)
              << k.preset << " x" << k.nodes << " " << to_string(op) << " " << to_string(r.algo) << "/"
              << to_string(r.proto) << " at " << s << " B";
        }
        last = r;
        first = false;
      }
    }
  }
}

TEST(TunerCurves, OversubscriptionChangesTheTimeNotTheChoice) {
  for (const char* name : {"dgx-h100", "dgx-a100", "pcie-8x-h100"}) {
    const auto flat = preset(name, shape(32, 1));
    // 8:1: a leaf holds four nodes in rank order, and a ring leaves it through one node's NICs,
    // so it needs 8 of the leaf's 32 ports upward; at 4:1 it has them, at 8:1 only four.
    const auto thin = preset(name, shape(32, 8));
    const Communicator cf(flat, 0);
    const Communicator ct(thin, 0);
    bool slower = false;
    for (const double s : sizes()) {
      const auto a = run(cf, Op::all_reduce, s);
      const auto b = run(ct, Op::all_reduce, s);
      EXPECT_EQ(a.algo, b.algo) << name << " at " << s;
      EXPECT_EQ(a.proto, b.proto) << name << " at " << s;
      EXPECT_GE(b.time.value(), a.time.value() * (1 - 1e-9)) << name << " at " << s;
      slower = slower || b.time.value() > a.time.value() * 1.2;
    }
    // (pcie-8x-h100 has 4 NICs per node: eight nodes share a leaf and a ring still fits its
    // uplinks at 8:1, so only the time check applies there.)
    if (std::string(name) != "pcie-8x-h100") {
      EXPECT_TRUE(slower) << name << ": 8:1 oversubscription never slowed a 32-node all_reduce";
    }
  }
}

TEST(TunerCurves, ASuboptimalChoiceIsNamedWithTheVariablesThatForceTheBetterOne) {
  // 16 DGX H100 on a fat-tree at 64 MiB: NCCL's tuner takes NVLSTree, whose chunk pipeline
  // fills slowly; gpufabric's model finds Tree faster and says how to force it.
  const auto t = preset("dgx-h100", shape(16));
  const Communicator c(t, 0);
  const auto r = run(c, Op::all_reduce, 64.0 * (1 << 20));
  if (r.better) {
    EXPECT_GE(r.better->saving, 0.15);
    ASSERT_FALSE(r.warnings.empty());
    const std::string& w = r.warnings.back();
    EXPECT_NE(w.find(std::string("NCCL_ALGO=") + to_string(r.better->algo)), std::string::npos) << w;
    EXPECT_NE(w.find(std::string("NCCL_PROTO=") + to_string(r.better->proto)), std::string::npos) << w;
    // The better choice, forced, is indeed faster in the model.
    const auto forced = run(c, Op::all_reduce, 64.0 * (1 << 20), r.better->algo, r.better->proto);
    EXPECT_LT(forced.time.value(), r.time.value());
  }
  // Forcing both removes the comparison: nothing to choose.
  const auto forced = run(c, Op::all_reduce, 64.0 * (1 << 20), Algo::ring, Proto::simple);
  EXPECT_FALSE(forced.better);
}

TEST(TunerModel, FollowsNcclsTablesWhereTheyDecide) {
  // One DGX H100 at 8 B: NCCL's Ring/LL latency (6.6 + 14 x 0.6 = 15 us) beats NVLS (25 us).
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  const auto small = run(c, Op::all_reduce, 8);
  EXPECT_EQ(small.algo, Algo::ring);
  EXPECT_EQ(small.proto, Proto::ll);
  // NVLS is never chosen for a product or for 8-bit types (NVLink SHARP cannot reduce them).
  CollectiveRequest r;
  r.op = Op::all_reduce;
  r.size = 1 << 30;
  r.redop = "prod";
  EXPECT_NE(predict(c, r).algo, Algo::nvls);
  r.redop = "sum";
  r.dtype = "int8";
  EXPECT_NE(predict(c, r).algo, Algo::nvls);
  r.dtype = "bfloat16";
  EXPECT_EQ(predict(c, r).algo, Algo::nvls);
  // Forcing NVLS for a type it cannot reduce falls back to Ring with a warning.
  r.dtype = "float";
  r.redop = "max";
  r.algo = Algo::nvls;
  const auto fb = predict(c, r);
  EXPECT_EQ(fb.algo, Algo::ring);
  ASSERT_FALSE(fb.warnings.empty());
  EXPECT_NE(fb.warnings.front().find("NVLink SHARP cannot reduce float with max"), std::string::npos);
}

TEST(TunerCurves, TimeNeverFallsAsTheSizeGrowsOnLargeClusters) {
  // NCCL's own choice, 8 B to 8 GiB, on the 128-node clusters issue 35 names: time never falls as
  // the size grows. On dgx-a100 busbw no longer dips either: it fell by 15% at 256 -> 512 MiB,
  // where the tuner leaves Tree/LL128 for Tree/Simple, while the time let LL128 outrun Simple.
  // (On aws-p5 the tuner's move to Ring/LL128 at 2 GiB still costs busbw, flagged as a choice
  // gpufabric's model finds slower, but not time.)
  for (const char* name : {"dgx-a100", "aws-p5"}) {
    topo::ClusterOverrides o;
    o.nodes = 128;
    const auto t = preset(name, o);
    const Communicator c(t, 0);
    CollectiveResult last;
    for (double s = 8; s <= 8589934592.0; s *= 2) {
      const auto r = run(c, Op::all_reduce, s);
      const std::string where = fmt::format("{} x128 at {} B: {}/{}", name, s, to_string(r.algo), to_string(r.proto));
      EXPECT_GE(r.time.value(), last.time.value()) << where;
      if (std::string(name) == "dgx-a100") {
        EXPECT_GE(r.busbw_GBps, 0.97 * last.busbw_GBps) << where;
      }
      last = r;
    }
  }
}

TEST(TunerModel, TreeLl128NeverOutrunsTreeSimpleAtLargeSizes) {
  // NCCL bounds every tree protocol by Simple's per-channel figure before LL128 takes 120/128 of
  // it (tuning.cc), so LL128's own higher cap (20 against 17.8 GB/s per channel on Ampere from
  // 3 nodes up) never applies alone. The time follows: on 128 DGX A100 nodes LL128 is not
  // faster than Simple at GiB sizes.
  topo::ClusterOverrides o;
  o.nodes = 128;
  const auto t = preset("dgx-a100", o);
  const Communicator c(t, 0);
  for (const double s : {1073741824.0, 4294967296.0}) {
    const auto simple = run(c, Op::all_reduce, s, Algo::tree, Proto::simple);
    const auto ll128 = run(c, Op::all_reduce, s, Algo::tree, Proto::ll128);
    EXPECT_GT(ll128.time.value(), simple.time.value()) << s;
  }
}

}  // namespace
}  // namespace gf::comm

namespace gf::comm {
namespace {

// NCCL's transport rules: P2P only up to NCCL_P2P_LEVEL (PXB, a common PCIe switch), else SHM.
TEST(Transports, PcieServerUsesP2pOnlyBehindOneSwitch) {
  const auto t = preset("pcie-8x-h100");  // two GPUs per PCIe switch, two switches per socket
  const Communicator pair(t, 2);
  const Communicator all(t, 8);
  EXPECT_EQ(pair.transport(0, 1), NcclTransport::p2p);
  EXPECT_EQ(all.transport(1, 2), NcclTransport::shm);  // across switches (NODE): beyond PXB
  EXPECT_EQ(all.transport(3, 4), NcclTransport::shm);  // across sockets (SYS)
  const auto two = run(pair, Op::all_reduce, 1 << 30);
  const auto eight = run(all, Op::all_reduce, 1 << 30);
  // The seeds' case 1: more GPUs in a PCIe box, less bus bandwidth, and the header says why.
  EXPECT_LT(eight.busbw_GBps, two.busbw_GBps / 4);
  bool says_shm = false;
  for (const auto& line : all.transport_summary()) says_shm = says_shm || line.find("SHM") != std::string::npos;
  EXPECT_TRUE(says_shm);
  // NCCL_P2P_LEVEL=SYS lets every pair use P2P, and the same eight GPUs go faster.
  NcclConfig sys;
  sys.p2p_level = PathLevel::sys;
  const Communicator open(t, 8, sys);
  EXPECT_EQ(open.transport(3, 4), NcclTransport::p2p);
  EXPECT_GT(run(open, Op::all_reduce, 1 << 30).busbw_GBps, 2 * eight.busbw_GBps);
}

TEST(Transports, GeForceP2pStaysOffWithANote) {
  auto spec = gf::test::preset("pcie-4x-rtx4090").spec();
  spec.p2p = true;  // asked for, but the stock GeForce driver refuses it
  const topo::Topology t(spec, gf::test::catalog());
  const Communicator c(t, 4);
  EXPECT_EQ(c.transport(0, 1), NcclTransport::shm);
  ASSERT_FALSE(c.notes().empty());
  EXPECT_NE(c.notes().front().find("P2P stays off"), std::string::npos);
}

TEST(Transports, NetworkTransportFollowsTheNetworkAndTheEnvironment) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.fabric = topo::FabricKind::fat_tree;
  const auto ib = preset("dgx-h100", o);
  EXPECT_EQ(Communicator(ib, 0).transport(0, 8), NcclTransport::net_gdr);
  NcclConfig no_ib;
  no_ib.ib_disable = true;  // IP over InfiniBand: NCCL's sockets
  const Communicator sock(ib, 0, no_ib);
  EXPECT_EQ(sock.transport(0, 8), NcclTransport::net_socket);
  EXPECT_LT(run(sock, Op::all_reduce, 1 << 30).busbw_GBps,
            run(Communicator(ib, 0), Op::all_reduce, 1 << 30).busbw_GBps);
  NcclConfig gdr_loc;
  gdr_loc.net_gdr_level = PathLevel::loc;  // GPUDirect RDMA nowhere: staged in host memory
  EXPECT_EQ(Communicator(ib, 0, gdr_loc).transport(0, 8), NcclTransport::net_staged);
  o.network = "eth-100g";
  const auto eth = preset("dgx-h100", o);
  EXPECT_EQ(Communicator(eth, 0).transport(0, 8), NcclTransport::net_socket);
}

TEST(Transports, EnvironmentVariablesAreCheckedWhereTheyAreGiven) {
  NcclConfig cfg;
  std::vector<std::string> ignored;
  apply_nccl_assignment(cfg, "NCCL_P2P_LEVEL=PHB", &ignored);
  EXPECT_EQ(cfg.p2p_level, PathLevel::phb);
  apply_nccl_assignment(cfg, "NCCL_P2P_DISABLE=1", &ignored);
  EXPECT_EQ(cfg.p2p_level, PathLevel::loc);
  apply_nccl_assignment(cfg, "NCCL_IB_HCA=mlx5_0", &ignored);
  ASSERT_EQ(ignored.size(), 1u);
  const std::string bad = gf::test::input_error([&] { apply_nccl_assignment(cfg, "NCCL_P2P_LEVEL=FAR", &ignored); });
  EXPECT_NE(bad.find("LOC, NVL, PIX, PXB, PHB, SYS"), std::string::npos) << bad;
  const std::string nochan =
      gf::test::input_error([&] { apply_nccl_assignment(cfg, "NCCL_MIN_NCHANNELS=0", &ignored); });
  EXPECT_NE(nochan.find("NCCL_MIN_NCHANNELS"), std::string::npos) << nochan;
  const std::string noeq = gf::test::input_error([&] { apply_nccl_assignment(cfg, "NCCL_P2P_LEVEL", &ignored); });
  EXPECT_NE(noeq.find("NAME=VALUE"), std::string::npos) << noeq;
}

}  // namespace
}  // namespace gf::comm

namespace gf::comm {
namespace {

TEST(Transports, ChannelAndBufferKnobsChangeTheModel) {
  const auto t = preset("pcie-8x-h100");
  NcclConfig more;
  more.min_channels = 8;
  const Communicator base(t, 2);
  const Communicator wide(t, 2, more);
  EXPECT_EQ(channels(base, Algo::ring), 2);
  EXPECT_EQ(channels(wide, Algo::ring), 8);
  NcclConfig fewer;
  fewer.max_channels = 4;
  const auto h = preset("dgx-h100");
  EXPECT_EQ(channels(Communicator(h, 0, fewer), Algo::ring), 4);
  EXPECT_EQ(channels(Communicator(h, 0, fewer), Algo::nvls), channels(Communicator(h, 0), Algo::nvls));
  // A bigger NCCL_BUFFSIZE makes bigger chunks, so a tree's pipeline takes longer to fill (at a
  // size where NCCL does not halve the chunk back down to keep enough chunks per channel).
  topo::ClusterOverrides o;
  o.nodes = 4;
  o.fabric = topo::FabricKind::fat_tree;
  const auto m = preset("dgx-h100", o);
  NcclConfig big;
  big.buffsize = 16.0 * (1 << 20);
  const double size = 16.0 * (1 << 30);
  const auto a = run(Communicator(m, 0), Op::all_reduce, size, Algo::tree, Proto::simple);
  const auto b = run(Communicator(m, 0, big), Op::all_reduce, size, Algo::tree, Proto::simple);
  EXPECT_GT(b.fill.value(), a.fill.value());
}

}  // namespace
}  // namespace gf::comm

namespace gf::comm {
namespace {

// Parameters are values: two sets compare in one process (a calibration beside the catalog).
TEST(Parameters, TwoParameterSetsInOneProcess) {
  const auto t = preset("pcie-8x-h100");
  NcclParams faster = nccl_params();
  faster.shm_channel_GBps *= 2;
  const Communicator builtin(t, 8);
  const Communicator calibrated(t, 8, {}, &faster);
  const double a = run(builtin, Op::all_reduce, 1 << 30).busbw_GBps;
  const double b = run(calibrated, Op::all_reduce, 1 << 30).busbw_GBps;
  EXPECT_NEAR(b / a, 2.0, 0.05);
  EXPECT_NEAR(run(builtin, Op::all_reduce, 1 << 30).busbw_GBps, a, 1e-12);  // the built-in set is untouched
}

}  // namespace
}  // namespace gf::comm

namespace gf::comm {
namespace {

// Communicators from any list of GPUs: the groups a training step makes.
TEST(GpuGroups, AnyListOfGpusIsACommunicator) {
  topo::ClusterOverrides o;
  o.nodes = 4;
  o.fabric = topo::FabricKind::fat_tree;
  const auto t = preset("dgx-h100", o);
  // A tensor-parallel pair inside node 0 is what two ranks on one node are.
  const Communicator tp(t, std::vector<long>{0, 1});
  EXPECT_EQ(tp.nodes(), 1);
  EXPECT_EQ(tp.ranks_per_node(), 2);
  const auto a = run(tp, Op::all_reduce, 64 << 20);
  const auto b = run(Communicator(preset("dgx-h100"), 2), Op::all_reduce, 64 << 20);
  EXPECT_NEAR(a.time.value(), b.time.value(), 1e-12);
  // The same pair on node 2 (GPUs 18 and 19) takes the same time, through that node's links.
  EXPECT_NEAR(run(Communicator(t, std::vector<long>{19, 18}), Op::all_reduce, 64 << 20).time.value(), a.time.value(),
              1e-12);
  // A data-parallel group along one rail: local GPU 3 of every node, one rank per node, over the
  // network through GPU 3's own NIC; rail 5 gives the same time by symmetry.
  const Communicator dp(t, std::vector<long>{3, 11, 19, 27});
  EXPECT_EQ(dp.nodes(), 4);
  EXPECT_EQ(dp.ranks_per_node(), 1);
  EXPECT_EQ(dp.gpu_of(2), 19);
  EXPECT_EQ(dp.cluster_node(2), 2);
  const auto rail3 = run(dp, Op::all_reduce, 256 << 20);
  const auto rail5 = run(Communicator(t, std::vector<long>{5, 13, 21, 29}), Op::all_reduce, 256 << 20);
  EXPECT_NEAR(rail3.time.value(), rail5.time.value(), rail3.time.value() * 1e-9);
  EXPECT_LT(rail3.busbw_GBps, 60);  // one NDR NIC per rank, not the node's eight
  // A pipeline stage on nodes 2 and 3 behaves like one on nodes 0 and 1.
  std::vector<long> upper;
  std::vector<long> lower;
  for (long g = 0; g < 16; ++g) {
    lower.push_back(g);
    upper.push_back(16 + g);
  }
  EXPECT_NEAR(run(Communicator(t, upper), Op::all_reduce, 256 << 20).time.value(),
              run(Communicator(t, lower), Op::all_reduce, 256 << 20).time.value(), 1e-9);
}

TEST(GpuGroups, TransportsFollowTheGpusChosen) {
  const auto t = preset("pcie-8x-h100");
  EXPECT_EQ(Communicator(t, std::vector<long>{0, 1}).transport(0, 1), NcclTransport::p2p);  // one switch
  EXPECT_EQ(Communicator(t, std::vector<long>{2, 3}).transport(0, 1), NcclTransport::p2p);
  EXPECT_EQ(Communicator(t, std::vector<long>{1, 2}).transport(0, 1), NcclTransport::shm);  // two switches
  EXPECT_EQ(Communicator(t, std::vector<long>{0, 4}).transport(0, 1), NcclTransport::shm);  // two sockets
}

TEST(GpuGroups, BadListsAreInputErrors) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.fabric = topo::FabricKind::fat_tree;
  const auto t = preset("dgx-h100", o);
  EXPECT_NE(gf::test::input_error([&] {
              Communicator c(t, std::vector<long>{0, 1, 8});
            }).find("same number"),
            std::string::npos);
  EXPECT_NE(gf::test::input_error([&] {
              Communicator c(t, std::vector<long>{0, 0});
            }).find("twice"),
            std::string::npos);
  EXPECT_NE(gf::test::input_error([&] { Communicator c(t, std::vector<long>{16}); }).find("not in the cluster"),
            std::string::npos);
  EXPECT_NE(gf::test::input_error([&] { Communicator c(t, std::vector<long>{}); }).find("empty"), std::string::npos);
}

}  // namespace
}  // namespace gf::comm

namespace gf::comm {
namespace {

// PXN (src/graph/paths.cc, ncclTopoComputePaths; src/transport/net.cc, sendSetup): a DGX H100
// with two NICs keeps them on GPU0's and GPU4's PCIe switches, so the other GPUs reach a NIC
// only through the CPU (PHB). NCCL sends their traffic over NVLink into the memory of the GPU
// next to the NIC, whose NIC reads it (GPUDirect RDMA at PIX); receives stay on the GPU itself.
struct PxnNode {
  topo::Topology t;
  int near = -1;  // a GPU on a NIC's PCIe switch
  int far = -1;   // a GPU whose NICs are all behind the CPU
};

PxnNode two_nic_dgx(const std::optional<std::string>& network = {}) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.fabric = topo::FabricKind::fat_tree;
  o.nics_per_node = 2;
  if (network) o.network = *network;
  PxnNode n{preset("dgx-h100", o)};
  const auto& node = n.t.node();
  for (int g = 0; g < node.gpus(); ++g) {
    const auto type = node.pcie_path(node.gpu(g), node.nic(node.nic_of_gpu(g))).type;
    if (type == topo::PathType::pix && n.near < 0) n.near = g;
    if (level_of(type) > PathLevel::pxb && n.far < 0) n.far = g;
  }
  return n;
}

TEST(Pxn, AFarGpuSendsOverNvlinkThroughThePeerNextToTheNic) {
  const auto n = two_nic_dgx();
  ASSERT_GE(n.near, 0);
  ASSERT_GE(n.far, 0);
  const Communicator c(n.t, 0);
  const int gpn = n.t.gpus_per_node();
  EXPECT_EQ(c.transport(n.near, n.near + gpn), NcclTransport::net_gdr);
  EXPECT_EQ(c.transport(n.far, n.far + gpn), NcclTransport::net_pxn);
  const topo::Route r = c.route(n.far, n.far + gpn);
  EXPECT_EQ(r.transport, topo::Transport::pxn);
  ASSERT_FALSE(r.links.empty());
  EXPECT_EQ(n.t.graph().link(r.links.front()).kind, topo::LinkKind::nvlink);  // into the peer GPU
  // Then the peer GPU's own PCIe path to its NIC, and no host memory on the sending side.
  const auto& node = n.t.node();
  const int nic = node.nic_of_gpu(n.far);
  int peer = -1;
  for (int g = 0; g < node.gpus() && peer < 0; ++g) {
    if (node.nic_of_gpu(g) == nic && node.pcie_path(node.gpu(g), node.nic(nic)).type == topo::PathType::pix) peer = g;
  }
  ASSERT_GE(peer, 0);
  for (const auto l : n.t.route_gpu_to_nic(peer, nic).links) {
    EXPECT_NE(std::find(r.links.begin(), r.links.end(), l), r.links.end());
  }
  for (const auto l : r.links) EXPECT_NE(n.t.graph().link(l).kind, topo::LinkKind::memory);
  // NCCL_DEBUG's spelling: the NIC, then the proxy rank in parentheses.
  bool named = false;
  for (const auto& line : c.transport_summary()) {
    named = named || (line.find(fmt::format("GPU{}: NET/IB/{}({})/GDRDMA", n.far, nic, peer)) != std::string::npos &&
                      line.find("PXN") != std::string::npos);
  }
  EXPECT_TRUE(named);
}

TEST(Pxn, DisabledTheFarGpuUsesItsOwnNicThroughTheCpu) {
  const auto n = two_nic_dgx();
  const int gpn = n.t.gpus_per_node();
  NcclConfig off;
  off.pxn_disable = true;  // NCCL_PXN_DISABLE=1: beyond NCCL_NET_GDR_LEVEL (PXB), staged in host memory
  const Communicator staged(n.t, 0, off);
  EXPECT_EQ(staged.transport(n.far, n.far + gpn), NcclTransport::net_staged);
  EXPECT_EQ(staged.transport(n.near, n.near + gpn), NcclTransport::net_gdr);
  const topo::Route r = staged.route(n.far, n.far + gpn);
  EXPECT_EQ(r.transport, topo::Transport::host_bounce);
  for (const auto l : r.links) EXPECT_NE(n.t.graph().link(l).kind, topo::LinkKind::nvlink);
  // NCCL_NET_GDR_LEVEL=PHB: GPUDirect RDMA from the far GPU across the CPU's root complex.
  off.net_gdr_level = PathLevel::phb;
  const Communicator direct(n.t, 0, off);
  EXPECT_EQ(direct.transport(n.far, n.far + gpn), NcclTransport::net_gdr);
  EXPECT_EQ(direct.route(n.far, n.far + gpn).transport, topo::Transport::gpudirect_rdma);
  // The time follows the route: staging through host memory is never faster than PXN's NVLink
  // and PCIe-switch path (here both are bounded by the two NICs, so the busbw is the same).
  const Communicator pxn(n.t, 0);
  const double with_pxn = run(pxn, Op::all_reduce, 1 << 30).busbw_GBps;
  const double without = run(staged, Op::all_reduce, 1 << 30).busbw_GBps;
  EXPECT_GE(with_pxn, without * (1 - 1e-9)) << with_pxn << " vs " << without;
  // PXN's receive stays on the far GPU, the NIC writing into it: where the NIC is on the other
  // socket that is peer traffic across the socket link, at its peer rate (Intel UPI), while the
  // staged route's copy into host memory is not; so the route may be slower there, not the run.
  const auto& cpu = n.t.cpu_spec();
  const double peer = cpu.socket_link_peer ? cpu.socket_link_peer->value() : r.bandwidth.value();
  EXPECT_GE(pxn.route(n.far, n.far + gpn).bandwidth.value(), std::min(r.bandwidth.value(), peer) * (1 - 1e-9));
  bool staged_named = false;
  for (const auto& line : staged.transport_summary()) {
    staged_named = staged_named || line == fmt::format("between nodes from GPU{}: NET/IB", n.far) ||
                   (line.find("NET/IB") != std::string::npos && line.find("GDRDMA") == std::string::npos);
  }
  EXPECT_TRUE(staged_named);
}

TEST(Pxn, NeedsNvlinkAndARelayInTheCommunicator) {
  // A PCIe server has no NVLink to relay over: its far GPUs keep their own NIC.
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.fabric = topo::FabricKind::fat_tree;
  o.nics_per_node = 1;
  const auto pcie = preset("pcie-8x-h100", o);
  const Communicator c(pcie, 0);
  for (int g = 0; g < pcie.gpus_per_node(); ++g) {
    EXPECT_NE(c.transport(g, g + pcie.gpus_per_node()), NcclTransport::net_pxn) << g;
  }
  // NCCL's topology holds only the communicator's GPUs: a group without the NIC's GPU has no relay.
  const auto n = two_nic_dgx();
  const int gpn = n.t.gpus_per_node();
  const auto& node = n.t.node();
  std::vector<long> group;
  for (int g = 0; g < gpn; ++g) {
    if (node.pcie_path(node.gpu(g), node.nic(node.nic_of_gpu(g))).type != topo::PathType::pix) {
      group.push_back(g);
      group.push_back(g + gpn);
    }
  }
  const Communicator far_only(n.t, group);
  EXPECT_EQ(far_only.transport(0, far_only.ranks_per_node()), NcclTransport::net_staged);
  // The default DGX H100 (a NIC on every GPU's switch) never needs PXN.
  topo::ClusterOverrides full;
  full.nodes = 2;
  full.fabric = topo::FabricKind::fat_tree;
  const auto dgx = preset("dgx-h100", full);
  const Communicator all(dgx, 0);
  for (int g = 0; g < 8; ++g) EXPECT_EQ(all.transport(g, g + 8), NcclTransport::net_gdr) << g;
}

// NCCL's tree correction factors were measured on full nodes, whose trees chain through every
// GPU of a node; with one rank per node the time leaves them out (2 x 1 H100 over NDR, forced
// Tree, runs 16 MiB at 97% of its 32 MiB rate), while NCCL's own choice still applies them.
TEST(TunerCurves, TreeCorrectionNeedsAChainInsideTheNode) {
  const auto t = preset("dgx-h100", shape(2));
  const Communicator one_per_node(t, 2);
  const Communicator full(t, 0);
  auto rate = [](const Communicator& c, double size) {
    return size / run(c, Op::all_reduce, size, Algo::tree, Proto::simple).time.value();
  };
  // Between 16 and 32 MiB NCCL's factor for Simple stays at 0.7; at 1 GiB there is none.
  const double mib = 1 << 20;
  const double one_mid = rate(one_per_node, 16 * mib) / rate(one_per_node, 1024 * mib);
  const double full_mid = rate(full, 16 * mib) / rate(full, 1024 * mib);
  EXPECT_GT(one_mid, full_mid + 0.05);
}

}  // namespace
}  // namespace gf::comm
