// NCCL's SHM transport: the sender's threads store into the receiver's host memory and the
// receiver's threads load it back (src/comm/communicator.cpp). A ring's channel does both with
// the same threads, a two-rank chain's channel only one of them; across sockets the stores cross
// the socket link at the CPU's rate for SM-driven peer traffic.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "comm/communicator.hpp"
#include "comm/model.hpp"
#include "comm/nccl_params.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

CollectiveResult predict_shm(const Communicator& c, Op op, double size, Engine engine = Engine::analytic) {
  CollectiveRequest r;
  r.op = op;
  r.size = size;
  r.engine = engine;
  return predict(c, r);
}

topo::Topology without_p2p(const char* name) {
  topo::ClusterOverrides o;
  o.p2p = false;
  return preset(name, o);
}

// A channel that only stores or only loads moves twice what a ring's channel moves: two A100s
// without P2P behind one Gen4 switch broadcast at twice their all_reduce's bus bandwidth. Two
// 2080 Ti on Gen3 x8 links cannot: the link holds the broadcast below its channels' rate.
TEST(ShmTransport, OneWayChainMovesTwiceARingWhereTheLinksAllow) {
  const auto a100 = without_p2p("dgx-a100");
  const Communicator c(a100, 2);
  ASSERT_EQ(c.transport(0, 1), NcclTransport::shm);
  EXPECT_NEAR(c.connection_rate(0, 1, true), 2 * c.connection_rate(0, 1, false), 1e-6);
  const double ring = predict_shm(c, Op::all_reduce, 1 << 30).busbw_GBps;
  const double chain = predict_shm(c, Op::broadcast, 1 << 30).busbw_GBps;
  EXPECT_NEAR(ring, 2 * nccl_params().shm_channel_GBps, 0.02 * ring);  // 2 channels
  EXPECT_NEAR(chain / ring, 2.0, 0.05);
  const auto gen3 = preset("pcie-2x-rtx2080ti");
  const Communicator d(gen3, 2);
  ASSERT_EQ(d.transport(0, 1), NcclTransport::shm);
  const double x8 = predict_shm(d, Op::broadcast, 1 << 30).busbw_GBps;
  EXPECT_LT(x8, 0.7 * chain);
  EXPECT_NEAR(predict_shm(d, Op::all_reduce, 1 << 30).busbw_GBps, ring, 0.02 * ring);
}

// The receiver's buffer is in its own socket's memory: a hop to a GPU on the other socket
// crosses the socket link on the sender's side, at the CPU's SM-peer rate (22 GB/s for this
// Xeon, not its 128 GB/s DMA rate); a hop inside one socket crosses none.
TEST(ShmTransport, CrossSocketStoresTakeTheSocketPeerLink) {
  const auto t = without_p2p("pcie-8x-h100");
  const Communicator c(t, 8);
  const auto& node = t.node();
  auto socket_links = [&](long a, long b) {
    double cap = std::numeric_limits<double>::infinity();
    int n = 0;
    for (const auto l : c.route(a, b).links) {
      if (t.graph().link(l).kind != topo::LinkKind::socket) continue;
      ++n;
      cap = std::min(cap, c.link_capacity(l));
    }
    return std::make_pair(n, cap);
  };
  ASSERT_NE(node.socket_of(node.gpu(3)), node.socket_of(node.gpu(4)));
  const auto across = socket_links(3, 4);
  EXPECT_EQ(across.first, 1);
  EXPECT_NEAR(across.second, 22e9, 1e6);
  EXPECT_EQ(socket_links(0, 2).first, 0);
}

// Once the channels are made fast, the socket link bounds the ring across sockets, and faster
// channels gain nothing more; with the built-in channels they bind first.
TEST(ShmTransport, CrossSocketRingIsBoundedByTheSocketLink) {
  const auto t = without_p2p("pcie-8x-h100");
  NcclParams fast = nccl_params();
  fast.shm_channel_GBps *= 20;
  NcclParams faster = fast;
  faster.shm_channel_GBps *= 10;
  const Communicator c(t, 8, {}, &fast);
  const Communicator d(t, 8, {}, &faster);
  const double bw_fast = predict_shm(c, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps;
  const double bw_faster = predict_shm(d, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps;
  EXPECT_LE(bw_fast, 22.0 * 1.001);
  EXPECT_NEAR(bw_faster, bw_fast, bw_fast * 0.01);
  const Communicator builtin(t, 8);
  const double bw = predict_shm(builtin, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps;
  EXPECT_NEAR(bw, 2 * nccl_params().shm_channel_GBps, 0.05 * bw);  // 2 channels, each at its rate
}

// A box whose socket link carries less SM-driven traffic than the SHM channels move is held
// to it: the same eight GPUs with a socket link of a tenth of the channels' rate run slower.
TEST(ShmTransport, SlowSocketLinkHoldsTheRingBelowTheChannels) {
  const auto t = without_p2p("pcie-8x-h100");
  NcclParams wide = nccl_params();
  wide.shm_channel_GBps = 100;  // channels far above the 22 GB/s socket link
  const Communicator c(t, 8, {}, &wide);
  const double bw = predict_shm(c, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps;
  EXPECT_LT(bw, 2 * wide.shm_channel_GBps / 4);
}

}  // namespace
}  // namespace gf::comm
