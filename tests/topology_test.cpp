#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"
#include "topo/summary.hpp"

using gf::test::catalog;
using gf::test::connected;
using gf::test::preset;

namespace gf {
namespace {

using topo::PathType;
using topo::Transport;

double gbps(Bandwidth b) { return in_GBps(b); }

bool uses_kind(const topo::Topology& t, const topo::Route& r, topo::LinkKind k) {
  for (auto id : r.links) {
    if (t.graph().link(id).kind == k) return true;
  }
  return false;
}

TEST(DgxH100, GpusTalkOverNvswitchAtNvlink4Rate) {
  const auto t = preset("dgx-h100");
  const auto& nv = catalog().nvlink(4);
  for (long a = 0; a < 8; ++a) {
    for (long b = 0; b < 8; ++b) {
      if (a == b) continue;
      const auto r = t.route_gpus(a, b);
      EXPECT_EQ(r.label(), "NV18");
      EXPECT_EQ(r.transport, Transport::nvlink);
      EXPECT_EQ(r.links.size(), 2u);  // GPU -> NVSwitch -> GPU
      EXPECT_NEAR(gbps(r.line_rate), 18 * 25.0, 1e-6);
      EXPECT_NEAR(gbps(r.bandwidth), 18 * in_GBps(nv.link_rate) * nv.efficiency, 1e-6);
      EXPECT_TRUE(connected(t.graph(), r, t.gpu(a), t.gpu(b)));
    }
  }
  // p2pBandwidthLatencyTest on H100 SXM measures about 380 GB/s one way (NVIDIA/nccl #1264).
  EXPECT_NEAR(gbps(t.route_gpus(0, 5).bandwidth), 380.0, 0.05 * 380.0);
}

TEST(DgxH100, GpuToNicIsPcieGen5x16) {
  const auto t = preset("dgx-h100");
  for (int g = 0; g < 8; ++g) {
    const int nic = t.node().nic_of_gpu(g);
    EXPECT_EQ(nic, g);  // one ConnectX-7 per GPU, rail order
    const auto r = t.route_gpu_to_nic(g, nic);
    EXPECT_EQ(r.type, PathType::pix);
    EXPECT_NEAR(gbps(r.line_rate), in_GBps(catalog().pcie(5).line_rate(16)), 1e-6);
    EXPECT_TRUE(connected(t.graph(), r, t.gpu(g), t.nic(0, nic)));
  }
  EXPECT_EQ(t.route_gpu_to_nic(0, 5).type, PathType::sys);
  EXPECT_EQ(t.route_gpu_to_nic(0, 2).type, PathType::node);
}

TEST(DgxH100, HostMemoryIsLocalOrAcrossSockets) {
  const auto t = preset("dgx-h100");
  const auto local = t.route_gpu_to_memory(0, 0);
  const auto remote = t.route_gpu_to_memory(0, 1);
  EXPECT_EQ(local.type, PathType::phb);
  EXPECT_EQ(remote.type, PathType::sys);
  EXPECT_TRUE(uses_kind(t, remote, topo::LinkKind::socket));
  EXPECT_FALSE(uses_kind(t, local, topo::LinkKind::socket));
  EXPECT_GT(remote.latency, local.latency);
  // Pinned H2D on Gen5 x16 measures 50-53 GB/s (nvbandwidth #24 D2H 52.8).
  EXPECT_NEAR(gbps(t.route_memory_to_gpu(0, 0).bandwidth), 52.0, 3.0);
}

TEST(Rtx4090, PeersAreStagedThroughHostMemory) {
  const auto t = preset("pcie-4x-rtx4090");
  const auto r = t.route_gpus(0, 1);
  EXPECT_EQ(r.transport, Transport::host_staged);
  EXPECT_TRUE(uses_kind(t, r, topo::LinkKind::memory));
  EXPECT_FALSE(uses_kind(t, r, topo::LinkKind::nvlink));
  EXPECT_TRUE(connected(t.graph(), r, t.gpu(0), t.gpu(1)));
  // Bounded by a Gen4 x16 copy, and never faster than it.
  EXPECT_LE(gbps(r.bandwidth), in_GBps(catalog().pcie(4).line_rate(16)) * catalog().pcie(4).copy_efficiency + 1e-9);
  EXPECT_GT(gbps(r.bandwidth), 10.0);
  EXPECT_EQ(r.label(), "NODE");  // GPUs on separate root ports of one socket
}

TEST(Rtx2080Ti, SharedHostBridgeIsPhb) {
  const auto t = preset("pcie-2x-rtx2080ti");
  const auto r = t.route_gpus(0, 1);
  EXPECT_EQ(r.label(), "PHB");
  EXPECT_EQ(r.transport, Transport::host_staged);
}

TEST(Dgx1V100, HybridCubeMeshHasNv1Nv2AndPcieOnlyPairs) {
  const auto t = preset("dgx1-v100");
  std::set<std::string> labels;
  for (long a = 0; a < 8; ++a) {
    int nvlinks = 0;
    for (long b = 0; b < 8; ++b) {
      if (a == b) continue;
      const auto r = t.route_gpus(a, b);
      labels.insert(r.label());
      if (r.type == PathType::nvlink) nvlinks += r.nvlinks;
      EXPECT_TRUE(connected(t.graph(), r, t.gpu(a), t.gpu(b)));
    }
    EXPECT_EQ(nvlinks, 6) << "GPU " << a << " should use all six NVLink 2 links";
  }
  EXPECT_TRUE(labels.count("NV1"));
  EXPECT_TRUE(labels.count("NV2"));
  EXPECT_TRUE(labels.count("SYS"));  // some pairs have no NVLink and cross sockets
}

TEST(HgxH100FourGpu, DirectNvlinkWithoutNvswitch) {
  const auto t = preset("hgx-h100-4gpu");
  EXPECT_FALSE(t.node().has_nvswitch());
  for (long a = 0; a < 4; ++a) {
    for (long b = 0; b < 4; ++b) {
      if (a == b) continue;
      const auto r = t.route_gpus(a, b);
      EXPECT_EQ(r.label(), "NV6");
      EXPECT_EQ(r.links.size(), 1u);
      EXPECT_NEAR(gbps(r.line_rate), 6 * 25.0, 1e-6);
    }
  }
}

TEST(SmallPcie, SwitchClassesFollowNvidiaSmi) {
  const auto spec = topo::load_cluster_file(gf::test::data_file("small_pcie.yaml"), catalog());
  const topo::Topology t(spec, catalog());
  EXPECT_EQ(t.route_gpus(0, 1).label(), "PIX");  // one switch
  EXPECT_EQ(t.route_gpus(2, 3).label(), "PXB");  // sw1 and sw1b
  EXPECT_EQ(t.route_gpus(0, 2).label(), "SYS");  // across sockets
  EXPECT_EQ(t.route_gpus(0, 1).transport, Transport::pcie_p2p);
  const auto r = t.route_gpus(0, 3);
  EXPECT_TRUE(connected(t.graph(), r, t.gpu(0), t.gpu(3)));
  EXPECT_TRUE(uses_kind(t, r, topo::LinkKind::socket));
  // The socket link carries the P2P copy but PCIe Gen4 x16 is still the bottleneck.
  EXPECT_NEAR(gbps(r.line_rate), in_GBps(catalog().pcie(4).line_rate(16)), 1e-6);
}

TEST(Overrides, P2pOffStagesEvenOnNvswitch) {
  topo::ClusterOverrides o;
  o.p2p = false;
  const auto t = preset("dgx-h100", o);
  const auto r = t.route_gpus(0, 1);
  EXPECT_EQ(r.transport, Transport::host_staged);
  EXPECT_TRUE(connected(t.graph(), r, t.gpu(0), t.gpu(1)));
  EXPECT_LT(gbps(r.bandwidth), 60.0);
}

TEST(AcrossNodes, GpudirectGoesGpuNicNetworkNicGpu) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  const auto t = preset("dgx-h100", o);
  const auto r = t.route_gpus(0, 8 + 3);
  EXPECT_EQ(r.type, PathType::net);
  EXPECT_EQ(r.transport, Transport::gpudirect_rdma);
  EXPECT_FALSE(uses_kind(t, r, topo::LinkKind::memory));
  EXPECT_TRUE(connected(t.graph(), r, t.gpu(0), t.gpu(11)));
  // NDR: 400 Gb/s = 50 GB/s line per NIC.
  EXPECT_NEAR(gbps(r.line_rate), 50.0, 1e-6);
}

TEST(AcrossNodes, WithoutGpudirectOrOverTcpTheDataBouncesThroughHostMemory) {
  for (const auto& [gpudirect, network] :
       {std::pair{false, std::string("ib-ndr")}, std::pair{true, std::string("eth-100g")}}) {
    topo::ClusterOverrides o;
    o.nodes = 2;
    o.gpudirect = gpudirect;
    o.network = network;
    const auto t = preset("dgx-h100", o);
    const auto r = t.route_gpus(1, 9);
    EXPECT_EQ(r.transport, Transport::host_bounce) << network;
    EXPECT_TRUE(uses_kind(t, r, topo::LinkKind::memory));
    EXPECT_TRUE(connected(t.graph(), r, t.gpu(1), t.gpu(9)));
  }
}

TEST(AllPresets, EveryIntraNodeRouteIsConnected) {
  for (const auto& name : topo::preset_names()) {
    SCOPED_TRACE(name);
    topo::ClusterOverrides o;
    o.nodes = 2;
    o.fabric = topo::FabricKind::fat_tree;
    const auto t = preset(name, o);
    const long g = t.gpus_per_node();
    for (long a = 0; a < g; ++a) {
      for (long b = 0; b < 2 * g; ++b) {
        const auto r = t.route_gpus(a, b);
        EXPECT_TRUE(connected(t.graph(), r, t.gpu(a), t.gpu(b))) << a << "->" << b;
        if (a != b) {
          EXPECT_GT(r.bandwidth.value(), 0);
          EXPECT_GT(r.latency.value(), 0);
        }
      }
      for (int s = 0; s < t.node().sockets(); ++s) {
        const auto up = t.route_gpu_to_memory(a, s);
        EXPECT_TRUE(connected(t.graph(), up, t.gpu(a), t.node().memory(s)));
        const auto down = t.route_memory_to_gpu(s, a);
        EXPECT_TRUE(connected(t.graph(), down, t.node().memory(s), t.gpu(a)));
      }
    }
  }
}

TEST(Determinism, SameInputSameRoutes) {
  topo::ClusterOverrides o;
  o.nodes = 64;
  o.fabric = topo::FabricKind::fat_tree;
  const auto t1 = preset("dgx-h100", o);
  const auto t2 = preset("dgx-h100", o);
  for (long a = 0; a < 512; a += 37) {
    for (long b = 0; b < 512; b += 53) {
      EXPECT_EQ(t1.route_gpus(a, b).links, t2.route_gpus(a, b).links);
    }
  }
}

bool has_note(const topo::Topology& t, const std::string& needle) {
  for (const auto& n : t.notes()) {
    if (n.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string all_notes(const topo::Topology& t) {
  std::string out;
  for (const auto& n : t.notes()) out += n + "\n";
  return out;
}

TEST(NetworkOverride, ANetworkImpliesItsNic) {
  // pcie-4x-rtx4090 has a 10 GbE X710. Under eth-100g the NIC must become a 100 GbE one, so
  // eth-100g is faster than eth-10g between two such nodes (it was slower: the 10 GbE NIC was
  // kept while eth-100g's lower efficiency applied).
  auto between_nodes = [](const std::string& network) {
    topo::ClusterOverrides o;
    o.nodes = 2;
    o.network = network;
    const auto t = preset("pcie-4x-rtx4090", o);
    return std::pair{gbps(t.route_gpus(0, 4).bandwidth), t.spec().node.nics.front().model};
  };
  const auto [bw10, nic10] = between_nodes("eth-10g");
  const auto [bw100, nic100] = between_nodes("eth-100g");
  EXPECT_EQ(nic10, "intel-x710");
  EXPECT_EQ(nic100, catalog().network("eth-100g").default_nic);
  EXPECT_GT(bw100, 5 * bw10);
  {
    topo::ClusterOverrides o;
    o.nodes = 2;
    o.network = "eth-100g";
    const auto t = preset("pcie-4x-rtx4090", o);
    EXPECT_NEAR(in_Gbps(t.fabric()->nic_line_rate()), 100.0, 1e-6);
    EXPECT_TRUE(has_note(t, "warning: --network eth-100g: NIC intel-x710 (10 Gb/s) replaced by")) << all_notes(t);
  }
  // --nic still overrides the implied NIC, and says that it runs at the network's rate.
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = "eth-100g";
  o.nic = "connectx-7";
  const auto t = preset("pcie-4x-rtx4090", o);
  EXPECT_EQ(t.spec().node.nics.front().model, "connectx-7");
  EXPECT_TRUE(has_note(t, "warning: --nic connectx-7 (400 Gb/s) runs at 100 Gb/s")) << all_notes(t);
}

TEST(NetworkOverride, NicCountIsKeptAndTheHeaderSaysSo) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = "eth-1g";
  const auto t = preset("dgx-h100", o);
  EXPECT_EQ(t.node().nics(), 8);
  EXPECT_TRUE(has_note(t, "keeps the design's 8 NICs per node")) << all_notes(t);
  // The 400 Gb/s ConnectX-7 runs Ethernet, so it is kept, capped at 1 Gb/s: a warning.
  EXPECT_TRUE(has_note(t, "warning: --network eth-1g: NIC connectx-7 (400 Gb/s) kept, running at 1 Gb/s"))
      << all_notes(t);
  // With --nics-per-node the rule is not stated: the count is the user's.
  o.nics_per_node = 2;
  EXPECT_FALSE(has_note(preset("dgx-h100", o), "keeps the design's"));
}

TEST(NetworkOverride, IgnoredOverridesWarn) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = "eth-100g";
  o.gpudirect = true;
  EXPECT_TRUE(has_note(preset("dgx-h100", o), "warning: --gpudirect on is ignored"));
  topo::ClusterOverrides p;
  p.p2p = true;
  EXPECT_TRUE(has_note(preset("pcie-2x-rtx2080ti", p), "warning: --p2p on is ignored"));
  topo::ClusterOverrides q;
  q.nodes = 2;
  q.fabric = topo::FabricKind::single;
  q.tiers = 3;
  EXPECT_TRUE(has_note(preset("dgx-h100", q), "warning: --tiers is ignored"));
  // An oversubscription that whole ports cannot make is built as the nearest split, and said.
  topo::ClusterOverrides r;
  r.nodes = 64;
  r.fabric = topo::FabricKind::fat_tree;
  r.oversubscription = 8;
  const auto t = preset("dgx-h100", r);
  EXPECT_EQ(t.fabric()->shape().down_ports, 57);
  EXPECT_TRUE(has_note(t, "warning: --oversubscription 8:1 is built as 57:7")) << all_notes(t);
}

std::vector<int> nic_sockets(const topo::Topology& t) {
  std::vector<int> out;
  for (int i = 0; i < t.node().nics(); ++i) out.push_back(t.node().socket_of(t.node().nic(i)));
  return out;
}

TEST(NetworkOverride, ANicCappedByItsPcieLinkWarns) {
  // A ConnectX-8 (800 Gb/s, Gen6 x16) under a DGX H100's Gen5 switches on XDR: its Gen5 x16
  // path carries less than the 800 Gb/s network.
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = "ib-xdr";
  const auto t = preset("dgx-h100", o);
  EXPECT_EQ(t.spec().node.nics.front().model, "connectx-8");
  EXPECT_TRUE(has_note(t, "warning: NIC connectx-8's PCIe path carries")) << all_notes(t);
  EXPECT_FALSE(has_note(preset("dgx-h100",
                               [] {
                                 topo::ClusterOverrides n;
                                 n.nodes = 2;
                                 return n;
                               }()),
                        "PCIe path carries"));
}

TEST(NicsPerNode, SpreadOverSocketsThenSwitches) {
  // DGX A100: 8 NICs, two under each of four top-level switches, two switches per socket.
  topo::ClusterOverrides o;
  o.nics_per_node = 2;
  EXPECT_EQ(nic_sockets(preset("dgx-a100", o)), (std::vector<int>{0, 1}));
  o.nics_per_node = 4;
  const auto t = preset("dgx-a100", o);
  EXPECT_EQ(nic_sockets(t), (std::vector<int>{0, 0, 1, 1}));
  std::vector<std::string> parents;
  for (const auto& n : t.spec().node.nics) parents.push_back(n.at.parent);
  EXPECT_EQ(parents, (std::vector<std::string>{"sw0n0", "sw1n0", "sw2n0", "sw3n0"}));
  // Every GPU then has a NIC on its own socket.
  for (int g = 0; g < t.gpus_per_node(); ++g) {
    EXPECT_EQ(t.node().socket_of(t.node().nic(t.node().nic_of_gpu(g))), t.node().socket_of(t.node().gpu(g))) << g;
  }
  // DGX H100: one NIC switch per GPU, four per socket. Four NICs go to every other switch, so
  // GPUs 0, 2, 4, 6 each keep a NIC on their own switch.
  const auto h = preset("dgx-h100", o);
  parents.clear();
  for (const auto& n : h.spec().node.nics) parents.push_back(n.at.parent);
  EXPECT_EQ(parents, (std::vector<std::string>{"cx0", "cx2", "cx4", "cx6"}));
  // AWS p5: 32 EFA interfaces, four under each of eight switches; 8 of them are one per switch.
  o.nics_per_node = 8;
  const auto p5 = preset("aws-p5", o);
  std::set<std::string> switches;
  for (const auto& n : p5.spec().node.nics) switches.insert(n.at.parent);
  EXPECT_EQ(switches.size(), 8u);
  // More NICs than slots share them, with a warning.
  o.nics_per_node = 16;
  EXPECT_TRUE(has_note(preset("dgx-a100", o), "warning: --nics-per-node 16: the design has 8 NIC slots"));
}

TEST(PcieWidth, TheX8SlotsOfADesktopHalveTheHostLink) {
  // pcie-2x-rtx2080ti: the i9-9900K's 16 lanes split x8/x8.
  const auto t = preset("pcie-2x-rtx2080ti");
  const auto h2d = t.route_memory_to_gpu(0, 0);
  EXPECT_NEAR(gbps(h2d.line_rate), in_GBps(catalog().pcie(3).line_rate(8)), 1e-6);
  EXPECT_GT(gbps(h2d.bandwidth), 6.0);
  EXPECT_LT(gbps(h2d.bandwidth), 7.0);
}

TEST(PcieWidth, DowntrainedLinksAreDescribedPerDevice) {
  const std::string text = R"(name: downtrained
node:
  gpu: h100-pcie
  gpus: 2
  cpu: xeon-8480c
  host_memory_GB: 512
  gpu_fabric: pcie
  gpu_parents:
    - cpu0
    - {parent: cpu0, lanes: 8, generation: 3}
  nics:
    - {model: connectx-7, parent: cpu0, lanes: 4}
network: {tech: ib-ndr}
)";
  const topo::Topology t(topo::parse_cluster(text, "downtrained.yaml", catalog()), catalog());
  EXPECT_NEAR(gbps(t.route_memory_to_gpu(0, 0).line_rate), in_GBps(catalog().pcie(5).line_rate(16)), 1e-6);
  EXPECT_NEAR(gbps(t.route_memory_to_gpu(0, 1).line_rate), in_GBps(catalog().pcie(3).line_rate(8)), 1e-6);
  EXPECT_NEAR(gbps(t.route_gpu_to_nic(0, 0).line_rate), in_GBps(catalog().pcie(5).line_rate(4)), 1e-6);
  const std::string bad = gf::test::input_error([] {
    (void)topo::parse_cluster(
        "name: x\nnode: {gpu: h100-pcie, gpus: 1, cpu: xeon-8480c, host_memory_GB: 1,\n"
        "  gpu_fabric: pcie, gpu_parents: [{parent: cpu0, lanes: 6}]}\n"
        "network: {tech: ib-ndr}\n",
        "w.yaml", catalog());
  });
  EXPECT_NE(bad.find("w.yaml:3"), std::string::npos) << bad;
  EXPECT_NE(bad.find("lanes"), std::string::npos) << bad;
}

TEST(RemoteSocket, QpiEraHostsPayToReachTheOtherSocketsMemory) {
  // dgx1-v100 (Broadwell QPI): a GPU's copy from the other socket's memory is capped by what
  // device traffic reaches across QPI; it was equal to the local copy before.
  const auto t = preset("dgx1-v100");
  const int own = t.node().socket_of(t.node().gpu(0));
  const double local = gbps(t.route_memory_to_gpu(own, 0).bandwidth);
  const double remote = gbps(t.route_memory_to_gpu(1 - own, 0).bandwidth);
  const double remote_d2h = gbps(t.route_gpu_to_memory(0, 1 - own).bandwidth);
  EXPECT_NEAR(remote, in_GBps(*catalog().cpu("xeon-e5-2698v4").socket_link_device), 1e-6);
  EXPECT_NEAR(remote_d2h, remote, 1e-6);
  EXPECT_LT(remote, 0.6 * local);
  // Sapphire Rapids UPI: no penalty at PCIe rates (measured), so remote equals local there.
  const auto h = preset("dgx-h100");
  const int hs = h.node().socket_of(h.node().gpu(0));
  EXPECT_NEAR(gbps(h.route_memory_to_gpu(1 - hs, 0).bandwidth), gbps(h.route_memory_to_gpu(hs, 0).bandwidth), 1e-6);
}

TEST(DefaultFabric, OneSwitchWhenThePortsFitElseTheSmallestFatTree) {
  topo::ClusterOverrides o;
  o.nodes = 8;  // 64 NDR ports: one radix-64 Quantum-2
  auto t = preset("dgx-h100", o);
  EXPECT_EQ(t.fabric()->shape().tiers, 1);
  EXPECT_TRUE(has_note(t, "fabric: one quantum-2 switch")) << all_notes(t);
  o.nodes = 16;  // 128 ports: a two-tier non-blocking fat-tree (an error before)
  t = preset("dgx-h100", o);
  EXPECT_EQ(t.fabric()->shape().kind, topo::FabricKind::fat_tree);
  EXPECT_EQ(t.fabric()->shape().tiers, 2);
  EXPECT_DOUBLE_EQ(t.fabric()->shape().oversubscription, 1.0);
  EXPECT_EQ(t.spec().network.fabric, topo::FabricKind::fat_tree);
  EXPECT_TRUE(has_note(t, "fabric: 2-tier non-blocking fat-tree of quantum-2 switches")) << all_notes(t);
  // --fabric fat-tree without --tiers takes the fewest tiers that hold the nodes.
  topo::ClusterOverrides f;
  f.nodes = 192;
  f.fabric = topo::FabricKind::fat_tree;
  const auto a = preset("dgx-a100", f);  // 1,536 HDR ports on radix-40 switches: 3 tiers
  EXPECT_EQ(a.fabric()->shape().tiers, 3);
  EXPECT_TRUE(has_note(a, "fabric: 3 tiers, the fewest")) << all_notes(a);
  f.nodes = 16;
  EXPECT_EQ(preset("dgx-a100", f).fabric()->shape().tiers, 2);
}

TEST(DefaultFabric, ErrorsFromAFilesNetworkBlockNameTheFileLineAndField) {
  auto error_of = [](long nodes, const std::string& extra) {
    const std::string text = "name: net-errors\nnodes: " + std::to_string(nodes) + R"(
node:
  gpu: h100-pcie
  gpus: 8
  cpu: xeon-8480c
  host_memory_GB: 512
  gpu_fabric: pcie
  gpu_parents: [cpu0, cpu0, cpu0, cpu0, cpu0, cpu0, cpu0, cpu0]
  nics:
    - {model: connectx-7, parent: cpu0, count: 8}
network:
  tech: ib-ndr
)" + extra;
    return gf::test::input_error(
        [&] { topo::Topology t(topo::parse_cluster(text, "net.yaml", catalog()), catalog()); });
  };
  // 200 nodes x 8 NICs do not fit one radix-64 switch: the file's fabric: line is at fault.
  const std::string single = error_of(200, "  fabric: single\n");
  EXPECT_NE(single.find("net.yaml:14"), std::string::npos) << single;
  EXPECT_NE(single.find("network.fabric"), std::string::npos) << single;
  EXPECT_EQ(single.find("--"), std::string::npos) << single;
  // 300 nodes need 75 leaves of 32 down-ports: more than a two-tier radix-64 fabric holds.
  const std::string tiers = error_of(300, "  fabric: fat-tree\n  tiers: 2\n");
  EXPECT_NE(tiers.find("net.yaml:15"), std::string::npos) << tiers;
  EXPECT_NE(tiers.find("network.tiers"), std::string::npos) << tiers;
  EXPECT_EQ(tiers.find("--"), std::string::npos) << tiers;
  // Too many nodes for three tiers: the file's nodes: line.
  const std::string nodes = error_of(10000, "");
  EXPECT_NE(nodes.find("net.yaml:2"), std::string::npos) << nodes;
  EXPECT_EQ(nodes.find("--"), std::string::npos) << nodes;
}

TEST(TopologySummary, InjectionIsCappedWhereTheNicsPcieCarriesLessThanTheNetwork) {
  // ib-xdr's ConnectX-8 (800 Gb/s) on DGX H100's Gen5 x16 NIC slots: the NICs run at their PCIe
  // rate, and the summary's injection says so instead of the network's 8 x 95 GB/s.
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = "ib-xdr";
  const auto t = preset("dgx-h100", o);
  const auto s = topo::summarize(t);
  const double pcie = gbps(t.node().to_memory(t.node().nic(0), t.node().socket_of(t.node().nic(0))).bandwidth);
  const double net = gbps(t.fabric()->nic_line_rate()) * t.network().efficiency;
  ASSERT_LT(pcie, net);
  EXPECT_TRUE(s.injection_pcie_capped);
  EXPECT_NEAR(gbps(s.node_injection), 8 * pcie, 1e-6);
  EXPECT_LT(gbps(s.node_injection), 8 * net * 0.6);
  // At 400 Gb/s the PCIe path carries all the network gives: no cap.
  topo::ClusterOverrides ndr;
  ndr.nodes = 2;
  ndr.network = "ib-ndr";
  const auto u = topo::summarize(preset("dgx-h100", ndr));
  EXPECT_FALSE(u.injection_pcie_capped);
}

TEST(CrossSocketPeer, IntelUpiCapsPeerTrafficButNotDmaToTheOtherSocketsMemory) {
  // pcie-8x-l40s on two Sapphire Rapids sockets: GPU0 and GPU4 sit on different sockets. Peer
  // traffic between them (NCCL_P2P_LEVEL=SYS) crosses UPI at NCCL's SRP figure, 22 GB/s, not
  // at the Gen4 link's 25.5; a copy into the other socket's memory is not peer traffic.
  const auto t = preset("pcie-8x-l40s");
  const auto& cpu = t.cpu_spec();
  ASSERT_TRUE(cpu.socket_link_peer.has_value());
  EXPECT_NEAR(gbps(*cpu.socket_link_peer), 22.0, 1e-9);
  const auto cross = t.route_gpus(0, 4);
  EXPECT_EQ(cross.type, PathType::sys);
  EXPECT_NEAR(gbps(cross.bandwidth), 22.0, 1e-9);
  EXPECT_GT(gbps(t.route_gpus(0, 2).bandwidth), 25.0);  // same socket: PCIe-bound
  EXPECT_GT(gbps(t.route_gpu_to_memory(0, 1).bandwidth), 25.0);
  // AMD's xGMI carries none (measured at the same-socket rate).
  EXPECT_FALSE(catalog().cpu("epyc-9654").socket_link_peer.has_value());
}

}  // namespace
}  // namespace gf
