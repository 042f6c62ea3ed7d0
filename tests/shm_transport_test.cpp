// NCCL's SHM transport (src/comm/shm_window): a channel's rate follows what its CUDA block keeps
// in flight (NCCL's threads by its tuner's PCI_BW rule, ncclCollUnroll by GPU generation) over a
// round trip through host memory, and the routes through host memory carry the flows, so the
// PCIe generation, the switch layout and the socket link each show in the result.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/model.hpp"
#include "comm/nccl_params.hpp"
#include "comm/shm_window.hpp"
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

topo::Link pcie_link(double lane_GBps, int lanes) {
  topo::Link l;
  l.line_rate = Bandwidth(lane_GBps * 1e9 * lanes);
  l.capacity = l.line_rate;
  l.lanes = static_cast<std::uint16_t>(lanes);
  l.kind = topo::LinkKind::pcie;
  return l;
}

// NCCL rates a link at width x per-lane speed / 80: 12 GB/s at Gen3 x16, 24 at Gen4 x16,
// 48 at Gen5 x16 (src/graph/topo.cc).
TEST(ShmWindow, NcclRatesPcieLinksAsItsTopologyDoes) {
  const auto& p = nccl_params();
  EXPECT_DOUBLE_EQ(nccl_pcie_GBps(p, pcie_link(0.985, 16)), 12.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_GBps(p, pcie_link(1.969, 16)), 24.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_GBps(p, pcie_link(3.938, 16)), 48.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_GBps(p, pcie_link(1.969, 8)), 12.0);
}

// A ring that crosses one link twice (two GPUs behind one switch uplink) gets half of it.
TEST(ShmWindow, RingBandwidthCountsCrossingsOfOneLink) {
  const auto& p = nccl_params();
  topo::Graph g;
  topo::Device d;
  const auto a = g.add_device(d);
  const auto b = g.add_device(d);
  const auto c = g.add_device(d);
  const auto ab =
      g.add_duplex(a, b, Bandwidth(31.5e9), Bandwidth(31.5e9), Seconds(0), Seconds(0), topo::LinkKind::pcie, 16);
  const auto bc =
      g.add_duplex(b, c, Bandwidth(31.5e9), Bandwidth(31.5e9), Seconds(0), Seconds(0), topo::LinkKind::pcie, 16);
  EXPECT_NEAR(nccl_ring_GBps(p, g, {{ab}, {bc}}), 24.0, 0.01);
  EXPECT_NEAR(nccl_ring_GBps(p, g, {{ab, bc}, {ab}}), 12.0, 0.01);
}

// NCCL's ring runs 256 threads where it rates the ring at PCI_BW (12 GB/s) or less, 512 above;
// one warp synchronises; each thread issues 4 16-byte loads before sm80, 8 from sm80, 6 on sm12x.
TEST(ShmWindow, ThreadsAndUnrollFollowNcclsRules) {
  const auto& p = nccl_params();
  const auto turing = shm_window(p, 75, 12.0);
  EXPECT_EQ(turing.threads, 256);
  EXPECT_EQ(turing.unroll, 4);
  EXPECT_DOUBLE_EQ(turing.bytes, 224.0 * 4 * 16);
  const auto ada = shm_window(p, 89, 24.0);
  EXPECT_EQ(ada.threads, 512);
  EXPECT_EQ(ada.unroll, 8);
  EXPECT_DOUBLE_EQ(ada.bytes, 480.0 * 8 * 16);
  EXPECT_EQ(shm_window(p, 100, 48.0).unroll, 8);
  EXPECT_EQ(shm_window(p, 120, 48.0).unroll, 6);
  EXPECT_EQ(shm_window(p, 80, 12.0).threads, 256);  // Gen4 GPUs sharing an uplink
}

// A channel that only sends or only receives crosses host memory once per round trip; a ring's
// channel both stores and loads across PCIe, twice.
TEST(ShmWindow, SimplexChannelMovesTwiceADuplexOne) {
  const auto t = preset("pcie-2x-rtx2080ti");
  const Communicator c(t, 2);
  ASSERT_EQ(c.transport(0, 1), NcclTransport::shm);
  EXPECT_NEAR(c.connection_rate(0, 1, true), 2 * c.connection_rate(0, 1, false), 1e-6);
  const auto& w = c.shm_window();
  EXPECT_NEAR(c.connection_rate(0, 1, true), w.bytes / (nccl_params().shm.round_trip_us * 1e-6), 1e-6);
}

// Boxes without P2P no longer share one plateau: a Gen3 2080 Ti pair (256 threads, Turing's
// unroll of 4) runs its SHM ring slower than a Gen4 RTX 4090 pair on root ports (512 threads,
// unroll 8), and a P2P-capable box is unaffected.
TEST(ShmTransport, Gen3TuringRingIsSlowerThanGen4AdaRing) {
  const auto gen3 = preset("pcie-2x-rtx2080ti");
  const auto gen4 = preset("pcie-4x-rtx4090");
  const Communicator c3(gen3, 2);
  const Communicator c4(gen4, 2);
  ASSERT_EQ(c3.transport(0, 1), NcclTransport::shm);
  ASSERT_EQ(c4.transport(0, 1), NcclTransport::shm);
  EXPECT_EQ(c3.shm_window().threads, 256);
  EXPECT_EQ(c4.shm_window().threads, 512);
  const double bw3 = predict_shm(c3, Op::all_reduce, 1 << 30).busbw_GBps;
  const double bw4 = predict_shm(c4, Op::all_reduce, 1 << 30).busbw_GBps;
  EXPECT_GT(bw4, 2 * bw3);
  // Without SHM hops there is no window.
  const auto nvl = preset("dgx-h100");
  EXPECT_EQ(Communicator(nvl, 8).shm_window().bytes, 0);
}

// Across sockets the flows cross the socket link: once the channels are made fast, that link
// (not the window) bounds the ring, and faster channels gain nothing more.
TEST(ShmTransport, CrossSocketRingIsBoundedByTheSocketLink) {
  const auto t = preset("pcie-8x-h100", [] {
    topo::ClusterOverrides o;
    o.p2p = false;
    return o;
  }());
  NcclParams fast = nccl_params();
  fast.shm.round_trip_us /= 100;
  NcclParams faster = fast;
  faster.shm.round_trip_us /= 10;
  const Communicator c(t, 8, {}, &fast);
  const Communicator d(t, 8, {}, &faster);
  // The ring's hop from socket 0 to socket 1 goes through a socket link.
  double socket_capacity = std::numeric_limits<double>::infinity();
  bool crosses = false;
  for (long a = 0; a < 8; ++a) {
    const long b = (a + 1) % 8;
    if (t.node().socket_of(t.node().gpu(c.local_gpu(a))) == t.node().socket_of(t.node().gpu(c.local_gpu(b)))) continue;
    for (const auto l : c.route(a, b).links) {
      if (t.graph().link(l).kind != topo::LinkKind::socket) continue;
      crosses = true;
      socket_capacity = std::min(socket_capacity, c.link_capacity(l));
    }
  }
  ASSERT_TRUE(crosses);
  // The socket link at the CPU's rate for SM-driven traffic (NCCL's SRP_QPI_BW for this Xeon).
  EXPECT_NEAR(socket_capacity, 22e9, 1e6);
  const double bw_fast = predict_shm(c, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps;
  const double bw_faster = predict_shm(d, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps;
  EXPECT_LE(bw_fast * 1e9, socket_capacity * 1.001);
  EXPECT_NEAR(bw_faster, bw_fast, bw_fast * 0.01);
  // With the built-in round trip the window binds first.
  const Communicator builtin(t, 8);
  EXPECT_LT(predict_shm(builtin, Op::all_reduce, 1 << 30, Engine::flow).busbw_GBps, bw_fast * 0.99);
}

}  // namespace
}  // namespace gf::comm
