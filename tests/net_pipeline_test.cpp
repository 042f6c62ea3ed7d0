// The pipeline start of NCCL's chunk-pipelined algorithms across nodes (src/comm/stage_fill):
// each stage at its own rate, a bounded start rather than a second copy of the data.
#include <gtest/gtest.h>

#include "comm/model.hpp"
#include "comm/pipeline_fill.hpp"
#include "comm/stage_fill.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;

topo::ClusterOverrides two_nodes_on(const std::string& network) {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = network;
  return o;
}

TEST(StageFill, CountsEachStageAtItsOwnRate) {
  // 14 hops inside the nodes at 1 GB/s for a 1 MB chunk (1 ms each) and two network crossings
  // sharing one NIC direction, whose data time for that chunk is 10 ms.
  StagePath path{.intra_stages = 14, .net_stages = 2, .net_shared = 2};
  const Seconds bottleneck(10e-3);
  // One chunk per pipeline: both crossings are in the data time (up, then down), only the hops add.
  EXPECT_NEAR(stage_fill(path, 1e6, 1, 1e9, bottleneck).value(), 14e-3, 1e-12);
  // A long pipeline: the data time covers one crossing; the last chunk's way down adds half of it.
  EXPECT_NEAR(stage_fill(path, 1e6, 1e9, 1e9, bottleneck).value(), 14e-3 + 5e-3, 1e-9);
  // The hops' share does not follow the network: ten times faster hops cost a tenth.
  EXPECT_NEAR(stage_fill(path, 1e6, 1, 10e9, bottleneck).value(), 1.4e-3, 1e-12);
  // One node: the node's link binds, the data time covers one chunk's worth of it.
  StagePath chain{.intra_stages = 14, .net_stages = 0, .net_shared = 1};
  EXPECT_NEAR(stage_fill(chain, 1e6, 4, 1e9, Seconds(2e-3)).value(), 12e-3, 1e-12);
  // Nothing to fill without a chunk or a data time, and never negative.
  EXPECT_EQ(stage_fill(path, 0, 1, 1e9, bottleneck).value(), 0.0);
  EXPECT_EQ(stage_fill(path, 1e6, 1, 1e9, Seconds(0)).value(), 0.0);
  EXPECT_EQ(stage_fill(StagePath{.intra_stages = 0, .net_stages = 1, .net_shared = 1}, 1e6, 1, 0, bottleneck).value(),
            0.0);
}

TEST(StageFill, TenGigabitFillIsABoundedStartNotASecondCopy) {
  // 2 DGX A100 over 10 GbE run Tree/Simple. The fill used to count every NVLink hop of the
  // nodes' chains at the 10 GbE chunk time: it equalled the data time up to 64 MiB, so every
  // message cost twice its transfer.
  const auto t = preset("dgx-a100", two_nodes_on("eth-10g"));
  const Communicator c(t, 0);
  CollectiveRequest r;
  r.op = Op::all_reduce;
  r.size = 1024 * kMiB;
  const auto largest = predict(c, r);
  ASSERT_EQ(largest.algo, Algo::tree);
  const double bound = largest.fill.value() * 1.1;
  double previous_time = 0;
  for (double size = 1 * kMiB; size <= 1024 * kMiB; size *= 2) {
    r.size = size;
    const auto p = predict(c, r);
    SCOPED_TRACE(size);
    EXPECT_LE(p.fill.value(), bound);                      // bounded by NCCL's chunk, not the message
    EXPECT_LT(p.fill.value(), 0.5 * p.data_time.value());  // never a second copy of the data
    if (previous_time > 0) {
      // Doubling the message at most doubles the time (the latency and the start stay), and
      // well above 1: the data dominates from 1 MiB on.
      EXPECT_LE(p.time.value() / previous_time, 2.05);
      EXPECT_GT(p.time.value() / previous_time, 1.45);
    }
    previous_time = p.time.value();
  }
  // At GiB sizes the start is a few percent: time(2S) / time(S) approaches 2.
  r.size = 512 * kMiB;
  EXPECT_GT(largest.time.value() / predict(c, r).time.value(), 1.95);
  EXPECT_LT(largest.fill.value() / largest.time.value(), 0.01);
}

TEST(StageFill, NvlsTreeStagesRunAtTheNodesNvlinkShare) {
  // NVLSTree on 2 DGX H100: 16 channels x 8 heads = 128 pipelines through every GPU's NVLink; a
  // chunk crosses four NVLS stages (scatter, reduce, multicast, gather) and two network ones.
  const auto t = preset("dgx-h100", two_nodes_on("ib-ndr"));
  const Communicator c(t, 0);
  const auto shape = pipeline_shape(c, Op::all_reduce, Algo::nvls_tree, Proto::simple, 32 * kMiB);
  EXPECT_EQ(shape.path.intra_stages, 4);
  EXPECT_EQ(shape.path.net_stages, 2);
  EXPECT_EQ(shape.pipelines, 128);
  // The fill does not depend on how slow the data time is once the network binds the chunks:
  // doubling the data time adds only the crossing's share, not the NVLS stages again.
  const double f1 =
      pipeline_fill(c, Op::all_reduce, Algo::nvls_tree, Proto::simple, 32 * kMiB, Seconds(100e-6)).value();
  const double f2 =
      pipeline_fill(c, Op::all_reduce, Algo::nvls_tree, Proto::simple, 32 * kMiB, Seconds(200e-6)).value();
  EXPECT_GT(f1, 0);
  EXPECT_LT(f2 - f1, 100e-6 / 4);  // 4 chunks per pipeline: at most a chunk's share more
  // On 4 nodes the tree is two levels deep: four crossings, four sharing the interior head's NIC.
  topo::ClusterOverrides four;
  four.nodes = 4;
  const auto t4 = preset("dgx-h100", four);
  const Communicator c4(t4, 0);
  const auto s4 = pipeline_shape(c4, Op::all_reduce, Algo::nvls_tree, Proto::simple, 32 * kMiB);
  EXPECT_EQ(s4.path.net_stages, 4);
  EXPECT_EQ(s4.path.net_shared, 4);
}

TEST(StageFill, MeshNodesHopOverEveryNvlinkOfTheGpu) {
  // A DGX-1's GPU reaches its peers over several direct NVLinks (NCCL's channels take different
  // cycles), so a chain hop runs at the share of all of them, not of the one link to rank 1:
  // the Tree/Simple fill is smaller than on a node whose GPUs had only that one link.
  const auto t = preset("dgx1-v100", two_nodes_on("efa"));
  const Communicator c(t, 0);
  const auto shape = pipeline_shape(c, Op::all_reduce, Algo::tree, Proto::simple, 64 * kMiB);
  EXPECT_EQ(shape.path.intra_stages, 14);
  const double fill = pipeline_fill(c, Op::all_reduce, Algo::tree, Proto::simple, 64 * kMiB, Seconds(1.0)).value();
  const topo::Route r = c.route(0, 1);
  ASSERT_FALSE(r.links.empty());
  const double one_link_hop = shape.chunk_bytes / (c.link_capacity(r.links.front()) / shape.pipelines);
  EXPECT_GT(fill, 0);
  EXPECT_LT(fill, 14 * one_link_hop + 1.0 / 2);  // the hops are cheaper than one link's share
}

}  // namespace
}  // namespace gf::comm
