#include <gtest/gtest.h>

#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "comm/p2p_channels.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

constexpr double MiB = 1024.0 * 1024.0;

topo::ClusterOverrides nodes(long n) {
  topo::ClusterOverrides o;
  o.nodes = n;
  return o;
}

TEST(P2pChannels, GrowWithTheSizeInsideAnNvlinkNode) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  // 8 ranks share 32 p2p channels: 4 per peer to start, doubled while a part exceeds
  // 32 x 512 KiB = 16 MiB.
  EXPECT_EQ(p2p_channels(c, 32 * MiB), 4);
  EXPECT_EQ(p2p_channels(c, 64 * MiB), 4);
  EXPECT_EQ(p2p_channels(c, 128 * MiB), 8);
  EXPECT_EQ(p2p_channels(c, 256 * MiB), 16);
  EXPECT_EQ(p2p_channels(c, 1024 * MiB), 32);
  EXPECT_EQ(p2p_channels(c, 64 * 1024 * MiB), 32);  // never more than the channels per peer
  // Small transfers: parts of at least 64 KiB.
  EXPECT_EQ(p2p_channels(c, 128 * 1024.0), 2);
}

TEST(P2pChannels, FewerRanksStartWithMoreChannels) {
  const auto t = preset("dgx-h100");
  const Communicator two(t, 2);
  EXPECT_EQ(p2p_channels(two, 64 * MiB), 16);
}

TEST(P2pChannels, DoNotBindAcrossNodesOrOverPcie) {
  const auto multi = preset("dgx-h100", nodes(2));
  EXPECT_EQ(p2p_channels(Communicator(multi, 0), 64 * MiB), 0);
  EXPECT_EQ(p2p_channel_time(Communicator(multi, 0), Op::sendrecv, 64 * MiB).value(), 0.0);
  const auto pcie = preset("pcie-8x-l40s");
  EXPECT_EQ(p2p_channel_time(Communicator(pcie, 0), Op::sendrecv, 64 * MiB).value(), 0.0);
}

TEST(P2pChannels, AcrossNodesRunSimpleUnlessLlBuffersAreAllocated) {
  // Shared network connections have no LL buffer by default (NCCL_ALLOC_P2P_NET_LL_BUFFERS=0),
  // so a 1 KiB sendrecv that crosses nodes runs Simple, while inside a node it runs LL.
  CollectiveRequest r;
  r.op = Op::sendrecv;
  r.size = 1024;
  const auto one = preset("dgx-h100");
  EXPECT_EQ(predict(Communicator(one, 0), r).proto, Proto::ll);
  const auto two = preset("dgx-h100", nodes(2));
  const auto simple = predict(Communicator(two, 0), r);
  EXPECT_EQ(simple.proto, Proto::simple);
  NcclConfig ll;
  std::vector<std::string> ignored;
  apply_nccl_assignment(ll, "NCCL_ALLOC_P2P_NET_LL_BUFFERS=1", &ignored);
  const auto with_ll = predict(Communicator(two, 0, ll), r);
  EXPECT_EQ(with_ll.proto, Proto::ll);
  EXPECT_LT(with_ll.time.value(), simple.time.value());
  NcclConfig unshared;
  apply_nccl_assignment(unshared, "NCCL_NET_SHARED_BUFFERS=0", &ignored);
  EXPECT_EQ(predict(Communicator(two, 0, unshared), r).proto, Proto::ll);
  // NCCL_PROTO=LL cannot give it LL buffers: it still runs Simple, and says so.
  r.proto = Proto::ll;
  const auto forced = predict(Communicator(two, 0), r);
  EXPECT_EQ(forced.proto, Proto::simple);
  EXPECT_FALSE(forced.warnings.empty());
  r.proto.reset();
  r.op = Op::alltoall;
  r.size = 16 * 1024;
  EXPECT_EQ(predict(Communicator(two, 0), r).proto, Proto::simple);
}

TEST(P2pChannels, SendrecvRunsAtTheChannelsCopyRate) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  CollectiveRequest r;
  r.op = Op::sendrecv;
  r.size = 64 * MiB;
  const auto res = predict(c, r);
  EXPECT_EQ(res.channels, 4);
  // 4 channels x 20.6 GB/s (NCCL's Hopper NVLink figure): the links could carry 4x more.
  EXPECT_NEAR(res.data_time.value(), 64 * MiB / (4 * 20.6e9), 1e-9);
  // The staircase: the time barely moves from 64 to 128 MiB, as the channels double.
  r.size = 128 * MiB;
  const auto twice = predict(c, r);
  EXPECT_NEAR(twice.time.value() / res.time.value(), 1.0, 0.02);
  // At 1 GiB the NVLink, not the channels, is the limit.
  r.size = 1024 * MiB;
  const auto big = predict(c, r);
  EXPECT_GT(big.data_time.value(), p2p_channel_time(c, Op::sendrecv, r.size).value() * 1.5);
}

TEST(P2pChannels, AlltoallUsesEveryPeersChannelsAtOnce) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  // 64 MiB alltoall on 8 ranks: 8 MiB per peer on 4 channels, 7 peers = 28 channels at once.
  const double per_peer = 8 * MiB;
  EXPECT_NEAR(p2p_channel_time(c, Op::alltoall, 64 * MiB).value(), per_peer / (4 * 20.6e9), 1e-12);
}

TEST(NvlinkIntermediate, MeshGpusWithoutALinkGoThroughAThirdGpuOverNvlink) {
  // DGX-1's hybrid cube-mesh: GPU0 has no NVLink to GPU5, but both have one to GPU1 and GPU4.
  // NCCL ranks that path (PATH_NVB) above PCIe and connects them P2P/indirect, not over SHM.
  const auto t = preset("dgx1-v100");
  const Communicator c(t, 0);
  EXPECT_EQ(c.transport(0, 5), NcclTransport::p2p);
  const auto r = c.route(0, 5);
  ASSERT_EQ(r.links.size(), 2u);
  for (const auto l : r.links) EXPECT_EQ(t.graph().link(l).kind, topo::LinkKind::nvlink);
  bool indirect = false;
  for (const auto& line : c.transport_summary()) indirect = indirect || line.find("P2P/indirect") != std::string::npos;
  EXPECT_TRUE(indirect);
  EXPECT_TRUE(c.nvlink_intra());
  // Without the intermediate in the communicator there is no NVB path: GPUs 0 and 5 alone.
  const Communicator pair(t, std::vector<long>{0, 5});
  EXPECT_EQ(pair.transport(0, 1), NcclTransport::shm);
  // NCCL_P2P_LEVEL=NVL stops below NVB.
  NcclConfig nvl;
  nvl.p2p_level = PathLevel::nvl;
  const Communicator direct_only(t, 0, nvl);
  EXPECT_EQ(direct_only.transport(0, 5), NcclTransport::shm);
}

TEST(NvlinkIntermediate, DgxOneTreeRunsOverNvlinkNotHostMemory) {
  // The tree's intra-node chain crosses pairs without a direct NVLink; over NVB its bus
  // bandwidth is of the ring's order, not a fifth of it (6 against 32 GB/s over SHM).
  const auto t = preset("dgx1-v100", nodes(2));
  const Communicator c(t, 0);
  CollectiveRequest r;
  r.op = Op::all_reduce;
  r.size = 1 << 30;
  r.algo = Algo::tree;
  const double tree = predict(c, r).busbw_GBps;
  r.algo = Algo::ring;
  const double ring = predict(c, r).busbw_GBps;
  EXPECT_GT(tree, 0.7 * ring);
}

}  // namespace
}  // namespace gf::comm
