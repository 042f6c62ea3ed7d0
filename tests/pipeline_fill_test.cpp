#include <gtest/gtest.h>
#include <cmath>

#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "comm/pipeline_fill.hpp"
#include "core/error.hpp"
#include "test_support.hpp"

using gf::test::preset;

namespace gf::comm {
namespace {

topo::ClusterOverrides nodes(long n) {
  topo::ClusterOverrides o;
  o.nodes = n;
  return o;
}

constexpr double KiB = 1024.0;
constexpr double MiB = 1024.0 * KiB;

TEST(PipelineFill, NvlsChunkFollowsNcclRules) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  // 16 channels x 1 head on one node: 128 KiB from 128 MiB (64 x 16 x 128K) up, 64K below,
  // 32K below 8 MiB, 16K below 1 MiB.
  EXPECT_EQ(pipeline_shape(c, Op::all_reduce, Algo::nvls, Proto::simple, 256 * MiB).chunk_bytes, 128 * KiB);
  EXPECT_EQ(pipeline_shape(c, Op::all_reduce, Algo::nvls, Proto::simple, 128 * MiB).chunk_bytes, 128 * KiB);
  EXPECT_EQ(pipeline_shape(c, Op::all_reduce, Algo::nvls, Proto::simple, 16 * MiB).chunk_bytes, 64 * KiB);
  EXPECT_EQ(pipeline_shape(c, Op::all_reduce, Algo::nvls, Proto::simple, 1 * MiB).chunk_bytes, 32 * KiB);
  EXPECT_EQ(pipeline_shape(c, Op::all_reduce, Algo::nvls, Proto::simple, 512 * KiB).chunk_bytes, 16 * KiB);
  EXPECT_EQ(pipeline_shape(c, Op::all_reduce, Algo::nvls, Proto::simple, 1 * MiB).pipelines, 16);
}

TEST(PipelineFill, NvlsTreeChunkStartsFromTheNvlsChunk) {
  // NCCL 2.21 and later: NVLSTree starts from NCCL_NVLS_CHUNKSIZE (128 KiB), not the 512 KiB
  // Simple step, and caps it at 64 KiB from 4 nodes up. 2 nodes x 8 heads x 16 channels.
  const auto two = preset("dgx-h100", nodes(2));
  const Communicator c2(two, 0);
  EXPECT_EQ(pipeline_shape(c2, Op::all_reduce, Algo::nvls_tree, Proto::simple, 1024 * MiB).chunk_bytes, 128 * KiB);
  EXPECT_EQ(pipeline_shape(c2, Op::all_reduce, Algo::nvls_tree, Proto::simple, 16 * MiB).chunk_bytes, 64 * KiB);
  EXPECT_EQ(pipeline_shape(c2, Op::all_reduce, Algo::nvls_tree, Proto::simple, 4 * MiB).chunk_bytes, 32 * KiB);
  const auto four = preset("dgx-h100", nodes(4));
  const Communicator c4(four, 0);
  EXPECT_EQ(pipeline_shape(c4, Op::all_reduce, Algo::nvls_tree, Proto::simple, 1024 * MiB).chunk_bytes, 64 * KiB);
  // The two variables GCP's gIB setup and NCCL's documentation name move them.
  NcclConfig bigger;
  bigger.nvls_chunksize = 512 * KiB;
  EXPECT_EQ(pipeline_shape(Communicator(two, 0, bigger), Op::all_reduce, Algo::nvls_tree, Proto::simple, 1024 * MiB)
                .chunk_bytes,
            256 * KiB);  // 1 GiB < 32 x 128 pipelines x 512 KiB: cut to 256 KiB
  // NVLS on one node (16 pipelines) keeps the bigger chunk at 1 GiB.
  const auto one = preset("dgx-h100");
  EXPECT_EQ(
      pipeline_shape(Communicator(one, 0, bigger), Op::all_reduce, Algo::nvls, Proto::simple, 1024 * MiB).chunk_bytes,
      512 * KiB);
  NcclConfig capped;
  capped.nvls_tree_max_chunksize = 32 * KiB;
  EXPECT_EQ(pipeline_shape(Communicator(two, 0, capped), Op::all_reduce, Algo::nvls_tree, Proto::simple, 1024 * MiB)
                .chunk_bytes,
            32 * KiB);
  std::vector<std::string> ignored;
  NcclConfig parsed;
  apply_nccl_assignment(parsed, "NCCL_NVLS_CHUNKSIZE=524288", &ignored);
  apply_nccl_assignment(parsed, "NCCL_NVLSTREE_MAX_CHUNKSIZE=65536", &ignored);
  EXPECT_EQ(parsed.nvls_chunksize, 512 * KiB);
  EXPECT_EQ(parsed.nvls_tree_max_chunksize, 64 * KiB);
  EXPECT_TRUE(ignored.empty());
  EXPECT_THROW(apply_nccl_assignment(parsed, "NCCL_NVLS_CHUNKSIZE=12", &ignored), InputError);
}

TEST(PipelineFill, PointToPointAcrossNodesCopiesInAndOutOfTheNetworkBuffer) {
  // Simple across nodes: the first chunk's copy into the network buffer and the last one's out
  // of it, at a B200 channel's copy rate (40.1 GB/s), with NCCL's network chunk rule: 128 KiB
  // from 1 MiB (8 steps) up, 64 KiB below that, 32 KiB below one step.
  const auto two = preset("dgx-b200", nodes(2));
  const Communicator c(two, 0);
  const double rate = 40.1e9;
  auto fill = [&](const Communicator& comm, Op op, double size) {
    return pipeline_fill(comm, op, Algo::p2p, Proto::simple, size, Seconds(1e-3)).value();
  };
  EXPECT_NEAR(fill(c, Op::sendrecv, 1 * MiB), 2 * 128 * KiB / rate, 1e-12);
  EXPECT_NEAR(fill(c, Op::sendrecv, 512 * KiB), 2 * 64 * KiB / rate, 1e-12);
  EXPECT_NEAR(fill(c, Op::sendrecv, 64 * KiB), 2 * 32 * KiB / rate, 1e-12);
  EXPECT_NEAR(fill(c, Op::sendrecv, 4 * KiB), 2 * 4 * KiB / rate, 1e-12);  // less than a chunk to copy
  // alltoall: each peer's share is chunked on its own (16 MiB / 16 ranks = 1 MiB per peer).
  EXPECT_NEAR(fill(c, Op::alltoall, 16 * MiB), 2 * 128 * KiB / rate, 1e-12);
  // NCCL_P2P_NET_CHUNKSIZE moves it.
  NcclConfig bigger;
  apply_nccl_assignment(bigger, "NCCL_P2P_NET_CHUNKSIZE=524288", nullptr);
  EXPECT_EQ(bigger.p2p_net_chunksize, 512 * KiB);
  EXPECT_NEAR(fill(Communicator(two, 0, bigger), Op::sendrecv, 64 * MiB), 2 * 512 * KiB / rate, 1e-12);
  EXPECT_THROW(apply_nccl_assignment(bigger, "NCCL_P2P_NET_CHUNKSIZE=0", nullptr), InputError);
  // None inside one node, none for collectives run by P2P's ring fallback, none with LL.
  const auto one = preset("dgx-b200");
  EXPECT_EQ(fill(Communicator(one, 0), Op::sendrecv, 1 * MiB), 0.0);
  EXPECT_EQ(pipeline_fill(c, Op::sendrecv, Algo::p2p, Proto::ll, 1 * MiB, Seconds(1e-3)).value(), 0.0);
  // The reported time carries it: a 1 MiB sendrecv across nodes costs more than the network
  // and latency terms alone would give at the same rate as 256 MiB.
  CollectiveRequest small;
  small.op = Op::sendrecv;
  small.size = 1 * MiB;
  CollectiveRequest large = small;
  large.size = 256 * MiB;
  const auto s = predict(c, small);
  const auto l = predict(c, large);
  EXPECT_NEAR(s.fill.value(), 2 * 128 * KiB / rate, 1e-12);
  EXPECT_GT(s.fill.value() / s.time.value(), 0.1);    // a seventh of a 1 MiB transfer
  EXPECT_LT(l.fill.value() / l.time.value(), 0.002);  // nothing at 256 MiB
}

TEST(PipelineFill, RingsAndLineProtocolsHaveNone) {
  const auto t = preset("dgx-h100", nodes(2));
  const Communicator c(t, 0);
  EXPECT_EQ(pipeline_fill(c, Op::all_reduce, Algo::ring, Proto::simple, 1024 * MiB, Seconds(1e-3)).value(), 0.0);
  EXPECT_EQ(pipeline_fill(c, Op::all_reduce, Algo::nvls_tree, Proto::ll, 64 * MiB, Seconds(1e-3)).value(), 0.0);
  const auto one = preset("dgx-h100");
  const Communicator node(one, 0);
  EXPECT_EQ(pipeline_fill(node, Op::all_reduce, Algo::tree, Proto::ll128, 64 * MiB, Seconds(1e-3)).value(), 0.0);
}

// A ring with LL128 stores and forwards its chunk at each network step on its critical path:
// NCCL's count, 2 (nodes - 1) for all_reduce and nodes - 1 for all_gather, one chunk time
// each, where a chunk time is the data time over the ring's steps. Inside a node it has none.
TEST(PipelineFill, RingLl128AddsAChunkPerNetworkStep) {
  const auto t = preset("dgx-h100", nodes(4));
  const Communicator c(t, 0);
  const Seconds data(1e-3);
  const double size = 16 * MiB;
  const auto ar = pipeline_shape(c, Op::all_reduce, Algo::ring, Proto::ll128, size);
  ASSERT_GT(ar.pipelines, 0);
  EXPECT_EQ(ar.serial_stages, 6);  // 2 x (4 - 1)
  // 32 ranks: a rank's share of a channel per ring step, under one LL128 step's 576,000 bytes.
  EXPECT_NEAR(ar.chunk_bytes, size / (32.0 * static_cast<double>(ar.pipelines)), 1e-6);
  EXPECT_NEAR(pipeline_fill(c, Op::all_reduce, Algo::ring, Proto::ll128, size, data).value(), 6 * 1e-3 / 62, 1e-12);
  const auto ag = pipeline_shape(c, Op::all_gather, Algo::ring, Proto::ll128, size);
  EXPECT_EQ(ag.serial_stages, 3);
  EXPECT_NEAR(pipeline_fill(c, Op::all_gather, Algo::ring, Proto::ll128, size, data).value(), 3 * 1e-3 / 31, 1e-12);
  // Messages larger than a step per rank and channel loop: the chunk stays within a step.
  EXPECT_LE(pipeline_shape(c, Op::all_reduce, Algo::ring, Proto::ll128, 4096 * MiB).chunk_bytes, 576000.0);
  const auto one = preset("dgx-h100");
  const Communicator node(one, 0);
  EXPECT_EQ(pipeline_fill(node, Op::all_reduce, Algo::ring, Proto::ll128, size, data).value(), 0.0);
  EXPECT_EQ(pipeline_fill(c, Op::broadcast, Algo::ring, Proto::ll128, size, data).value(), 0.0);
}

// Across nodes NCCL's proxy sends an LL128 step only once all its lines are written: each
// network hop of the tree stores and forwards whole chunks (2 stages per hop, up and down).
TEST(PipelineFill, TreeLl128StoresAndForwardsAcrossTheNetwork) {
  const auto t = preset("dgx-h100", nodes(2));
  const Communicator c(t, 0);
  const auto shape = pipeline_shape(c, Op::all_reduce, Algo::tree, Proto::ll128, 16 * MiB);
  EXPECT_EQ(shape.depth, 2);  // 2 x log2(2 nodes)
  // NCCL's chunk: 576,000 data bytes per LL128 step, halved while a channel would get fewer
  // than (1 + 1 + 0.8) x 64 / 8 = 22.4 chunks, stopping at 128 KiB or below.
  EXPECT_LE(shape.chunk_bytes, 131072.0);
  EXPECT_GT(shape.chunk_bytes, 32768.0);
  const double chunks = std::ceil(16 * MiB / static_cast<double>(shape.pipelines) / shape.chunk_bytes);
  const Seconds data(1e-3);
  // In flight: 2 x depth - 1 = 3 chunks (fewer than NCCL_STEPS).
  EXPECT_NEAR(pipeline_fill(c, Op::all_reduce, Algo::tree, Proto::ll128, 16 * MiB, data).value(), 3 * 1e-3 / chunks,
              1e-12);
}

TEST(PipelineFill, IsNcclStepsChunksOnceThePipelineIsLong) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  // 1 GiB over 16 pipelines of 128 KiB chunks = 512 chunks each: the fill is 8 of them.
  const Seconds data(4e-3);
  EXPECT_NEAR(pipeline_fill(c, Op::all_reduce, Algo::nvls, Proto::simple, 1024 * MiB, data).value(), 4e-3 * 8 / 512,
              1e-12);
  // 1 MiB = 2 chunks of 32 KiB per pipeline: no more than the chunks there are.
  EXPECT_NEAR(pipeline_fill(c, Op::all_reduce, Algo::nvls, Proto::simple, 1 * MiB, data).value(), 4e-3, 1e-12);
}

TEST(PipelineFill, ShrinksRelativeToTheMessageAsItGrows) {
  const auto t = preset("dgx-h100", nodes(2));
  const Communicator c(t, 0);
  double last = 1e9;
  for (double size = 4 * MiB; size <= 16 * 1024 * MiB; size *= 4) {
    const Seconds data(size / 250e9);
    const double share =
        pipeline_fill(c, Op::all_reduce, Algo::nvls_tree, Proto::simple, size, data).value() / data.value();
    EXPECT_LE(share, last + 1e-12) << size;
    last = share;
  }
  EXPECT_LT(last, 0.1);
}

TEST(PipelineFill, ATreeOfTwoHoldsOneChunkInFlight) {
  // Two nodes, one GPU each: a chunk goes up one crossing and down one, and the two trees' up
  // and down share each NIC direction, so the data time covers both while a pipeline holds one
  // chunk and one of them (half a shared chunk time) once it is long (src/comm/stage_fill).
  const auto t = preset("dgx-h100", nodes(2));
  const Communicator c(t, 2);
  const auto s = pipeline_shape(c, Op::all_reduce, Algo::tree, Proto::simple, 16 * MiB);
  ASSERT_GT(s.pipelines, 0);
  EXPECT_EQ(s.depth, 1);
  EXPECT_EQ(s.path.intra_stages, 0);
  EXPECT_EQ(s.path.net_stages, 2);
  const double chunks = 16 * MiB / static_cast<double>(s.pipelines) / s.chunk_bytes;
  const Seconds data(1e-3);
  const double round = 1e-3 / chunks;
  EXPECT_NEAR(pipeline_fill(c, Op::all_reduce, Algo::tree, Proto::simple, 16 * MiB, data).value(),
              round / 2 * (1 - 1 / chunks), 1e-12);
}

TEST(PipelineFill, NvlsTreeFillCountsTheKernelsStagesNotTheFifo) {
  // 2 nodes: scatter, NVLS reduce, up, down, multicast, gather = 6 stages. The four NVLS stages
  // run at a pipeline's share of the GPU's NVLink (all 128 pipelines go through it), the two
  // crossings at the network's share (the data time's); the FIFO's 8 slots set no fill. Once a
  // pipeline holds many chunks the fill stops growing with the size.
  const auto two = preset("dgx-h100", nodes(2));
  const Communicator c2(two, 0);
  const double size = 1024 * MiB;
  const auto s = pipeline_shape(c2, Op::all_reduce, Algo::nvls_tree, Proto::simple, size);
  EXPECT_EQ(s.stages, 6);
  const double chunks = size / static_cast<double>(s.pipelines) / s.chunk_bytes;
  ASSERT_GT(chunks, 8);
  const Seconds data(1e-3);
  const double nvlink = c2.link_capacity(c2.route(0, 1).links.front());
  const double hop = s.chunk_bytes / (nvlink / static_cast<double>(s.pipelines));
  const double round = 1e-3 / chunks;
  EXPECT_NEAR(pipeline_fill(c2, Op::all_reduce, Algo::nvls_tree, Proto::simple, size, data).value(),
              4 * hop + round / 2 * (1 - 1 / chunks), 1e-12);
  const auto four = preset("dgx-h100", nodes(4));
  EXPECT_EQ(pipeline_shape(Communicator(four, 0), Op::all_reduce, Algo::nvls_tree, Proto::simple, size).stages, 8);
  // On 10 GbE the fill at 1 GiB is the same handful of chunk times, not the data time.
  topo::ClusterOverrides slow = nodes(2);
  slow.network = "eth-10g";
  const auto t = preset("dgx-h100", slow);
  const Communicator c(t, 0);
  CollectiveRequest r;
  r.op = Op::all_reduce;
  r.size = size;
  r.algo = Algo::nvls_tree;
  r.proto = Proto::simple;
  r.engine = Engine::analytic;
  const auto big = predict(c, r);
  EXPECT_LT(big.fill.value(), 0.1 * big.data_time.value());
  r.size = 2 * size;
  // The chunk is NCCL's, not the message (only the crossing's 1 - 1 / chunks share moves).
  EXPECT_NEAR(predict(c, r).fill.value(), big.fill.value(), 0.01 * big.fill.value());
}

TEST(PipelineFill, PredictionAddsItToLatencyAndData) {
  const auto t = preset("dgx-h100");
  const Communicator c(t, 0);
  CollectiveRequest r;
  r.op = Op::all_reduce;
  r.size = 256 * MiB;
  r.algo = Algo::nvls;
  const auto res = predict(c, r);
  EXPECT_GT(res.fill.value(), 0.0);
  EXPECT_NEAR(res.time.value(), res.latency.value() + res.data_time.value() + res.fill.value(), 1e-15);
}

}  // namespace
}  // namespace gf::comm
