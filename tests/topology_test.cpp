#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

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

}  // namespace
}  // namespace gf
