// The training step's closed-form data-parallel schedule (the planner's path) against the full
// flow graph of every group's every bucket, and the context's reuse across evaluations.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_support.hpp"
#include "work/contention_sample.hpp"
#include "work/model_library.hpp"
#include "work/train_step.hpp"

using gf::test::preset;

namespace gf::work {
namespace {

struct Case {
  const char* preset;
  long nodes;
  const char* network;
  const char* model;
  long tp;
  long pp;
  bool distributed_optimizer;
  long vpp = 1;
  bool overlap_param_gather = false;
};

TrainOptions options(const Case& c, long gpus) {
  TrainOptions o;
  o.layout.tp = c.tp;
  o.layout.pp = c.pp;
  o.layout.dp = gpus / (c.tp * c.pp);
  o.layout.vpp = c.vpp;
  o.memory.micro_batch = 1;
  o.memory.distributed_optimizer = c.distributed_optimizer;
  o.memory.overlap_param_gather = c.overlap_param_gather;
  o.global_batch = 4 * o.layout.dp;
  return o;
}

// "Symmetric layouts may be collapsed ... provided a test shows the collapsed and the full
// graph agree within 2% on small clusters": NVSwitch nodes over InfiniBand and a slow
// Ethernet, PCIe nodes without NVLink (several DP groups share a PCIe switch and its NIC), TP
// inside and across the groups, with and without a sharded optimizer.
TEST(TrainSchedule, ClosedFormAgreesWithTheFullFlowGraph) {
  const Case cases[] = {
      {"dgx-h100", 2, "ib-ndr", "llama3.1-8b", 1, 1, false},
      {"dgx-h100", 2, "ib-ndr", "llama3.1-8b", 2, 1, true},
      {"dgx-h100", 4, "eth-25g", "llama3.1-8b", 8, 1, false},
      {"dgx-a100", 4, "ib-hdr", "gpt3-1.3b", 4, 2, false},
      {"pcie-8x-h100", 2, "roce-400g", "gpt3-1.3b", 2, 1, false},
      {"pcie-8x-l40s", 2, "roce-200g", "gpt3-350m", 1, 1, true},
      // Pipelines: a stage per node over InfiniBand, interleaved; PCIe stages whose eight
      // peers cross the boundary through four NICs at once.
      {"dgx-h100", 4, "ib-ndr", "llama3.1-8b", 8, 4, false, 2},
      {"dgx-h100", 2, "eth-25g", "gpt3-1.3b", 4, 2, false},
      {"pcie-8x-l40s", 2, "roce-200g", "gpt3-350m", 1, 2, false},
      // Megatron's --overlap-param-gather: the gathers under the next step's forward, over a
      // fast network (hidden) and a slow one (the forward waits for them).
      {"dgx-h100", 2, "ib-ndr", "llama3.1-8b", 2, 1, true, 1, true},
      {"dgx-h100", 4, "eth-25g", "llama3.1-8b", 8, 1, true, 1, true},
      {"dgx-h100", 4, "eth-25g", "llama3.1-8b", 8, 1, true, 1, false},
  };
  for (const auto& c : cases) {
    topo::ClusterOverrides ov;
    ov.nodes = c.nodes;
    ov.network = c.network;
    const auto t = preset(c.preset, ov);
    const auto m = library_model(c.model);
    auto o = options(c, t.gpu_count());
    const auto closed = train_step(t, m, o);
    o.full_graph = true;
    const auto full = train_step(t, m, o);
    SCOPED_TRACE(::testing::Message() << c.preset << " x" << c.nodes << " " << c.network << " " << c.model << " TP "
                                      << c.tp << " PP " << c.pp << " VPP " << c.vpp);
    // The flow graph does not take NCCL's SMs from the compute; the closed form's share of that
    // is taken back out to compare the schedules.
    EXPECT_NEAR((closed.step_s - closed.breakdown.sm_contention_s) / full.step_s, 1.0, 0.02);
    if (o.layout.dp > 1) {
      EXPECT_GT(full.breakdown.dp_exposed_s + full.dp_communication_s, 0.0);
      EXPECT_NEAR(closed.dp_communication_s / full.dp_communication_s, 1.0, 0.02);
    }
    if (o.layout.pp > 1) {
      // The pipeline's sends on the critical path: the closed form's count times one send
      // stretched by its peers', against the schedule's graph with every peer's flows.
      EXPECT_GT(full.breakdown.pp_p2p_s, 0.0);
      EXPECT_NEAR(closed.breakdown.pp_p2p_s, full.breakdown.pp_p2p_s, 0.02 * full.step_s);
    }
  }
}

// NCCL's kernels hold one SM per channel while they run: the backward compute they overlap
// loses that share of the overlap, and the step loses what of it the last reduction does not
// cover.
TEST(TrainSchedule, OverlappingReductionsSlowTheComputeBySmShare) {
  std::vector<LayerCost> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"L", 1e-3, 2e-3, 100e6});
  DdpOptions o;
  auto fixed = [](comm::Op, double) { return CollectiveTimes{1e-3, 1e-3}; };
  const auto free = ddp_schedule(layers, o, fixed);
  o.sm_share = 0.25;
  const auto busy = ddp_schedule(layers, o, fixed);
  double overlap = 0;
  const double compute_end = 8 * 3e-3;
  for (const auto& b : free.buckets) overlap += std::max(0.0, std::min(b.end_s, compute_end) - b.start_s);
  EXPECT_GT(overlap, 0.0);
  // The backward ends 0.25 x overlap later; the last reduction, 1 ms after it, hides part of
  // that: what the step loses, and what the breakdown calls the SMs' cost, is the rest.
  EXPECT_GT(busy.step_s, free.step_s);
  EXPECT_LE(busy.step_s, free.step_s + 0.25 * overlap + 1e-12);
  EXPECT_NEAR(busy.sm_contention_s, busy.step_s - free.step_s, 1e-12);
  EXPECT_NEAR(busy.sm_contention_s, 0.25 * overlap - 1e-3, 1e-12);
}

// Megatron's --overlap-param-gather: the distributed optimizer's all-gathers leave the end of the
// step and open the next one, in forward order; each layer's first forward waits only for its own
// bucket, so what shows is the first bucket and whatever the gathers outrun the forward by.
TEST(TrainSchedule, ParameterGathersOverlapTheNextForward) {
  std::vector<LayerCost> layers;
  for (int i = 0; i < 8; ++i) layers.push_back({"L", 1e-3, 2e-3, 100e6});
  DdpOptions o;
  o.first_bucket_bytes = 0;
  o.bucket_bytes = 100e6;  // a layer's gradients; two layers' parameters: four gathers
  o.reduce_scatter = true;
  o.gather_bytes = 400e6;  // 16-bit parameters: half the fp32 gradients
  const double gather = 0.5e-3;
  auto fixed = [&](comm::Op op, double) {
    const double t = op == comm::Op::all_gather ? gather : 1e-4;
    return CollectiveTimes{t, t};
  };
  const auto after = ddp_schedule(layers, o, fixed);
  o.overlap_param_gather = true;
  const auto under = ddp_schedule(layers, o, fixed);
  // Four gathers of 0.5 ms after the optimizer; overlapped, only the first one waits (the
  // others finish while the two layers before them run, 2 ms per bucket).
  EXPECT_NEAR(after.step_s - under.step_s, 3 * gather, 1e-12);
  EXPECT_NEAR(under.compute_s, after.compute_s, 1e-15);
  EXPECT_DOUBLE_EQ(after.communication_s, under.communication_s);
  // Gathers slower than the forward: the forward waits for each bucket in turn.
  const double slow = 5e-3;
  auto slow_gathers = [&](comm::Op op, double) {
    const double t = op == comm::Op::all_gather ? slow : 1e-4;
    return CollectiveTimes{t, t};
  };
  const auto waiting = ddp_schedule(layers, o, slow_gathers);
  // The last bucket is gathered at 4 x 5 ms; its two layers' forwards (2 ms) and the backward
  // (16 ms) follow, then the last reduce-scatter (0.1 ms) and the optimizer (0).
  EXPECT_NEAR(waiting.step_s, 4 * slow + 2e-3 + 16e-3 + 1e-4, 1e-12);
}

// The planner's loop: a second evaluation on the same context builds no communicator and runs
// no flow graph again, and gives the same answer as a fresh one.
TEST(TrainSchedule, ContextIsReusedAcrossEvaluations) {
  topo::ClusterOverrides ov;
  ov.nodes = 4;
  const auto t = preset("dgx-h100", ov);
  const auto m = library_model("llama3.1-8b");
  TrainingContext context(t);
  TrainOptions o;
  o.layout.tp = 2;
  o.layout.dp = 16;
  const auto first = train_step(context, m, o);
  const auto built = context.communicators_built();
  const auto runs = context.flow_runs();
  EXPECT_GT(built, 1U);
  EXPECT_GT(runs, 0U);
  o.memory.recompute = Recompute::selective;  // another layout with the same groups
  const auto second = train_step(context, m, o);
  EXPECT_EQ(context.communicators_built(), built);
  EXPECT_EQ(context.flow_runs(), runs);
  EXPECT_DOUBLE_EQ(train_step(t, m, o).step_s, second.step_s);
  EXPECT_NE(first.step_s, second.step_s);
}

// Concurrent groups stretch a ring all-reduce, all-gather and reduce-scatter by the same factor:
// the three run the same flows around the same ring, so the context prices one for all three.
// Checked against the flow engine run with each operation's own flows, on NVSwitch nodes over a
// non-blocking and an 8:1 oversubscribed fat-tree (eight rail groups), and on PCIe nodes (two
// interleaved groups).
TEST(Contention, RingOpsShareOneFactor) {
  struct Case {
    const char* preset;
    long nodes;
    double oversubscription;
    std::vector<std::vector<long>> locals;  // each group's GPUs inside every node
    bool stretched;                         // whether the groups slow each other at all
  };
  const std::vector<Case> cases{
      {"dgx-a100", 4, 1.0, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}, true},
      {"dgx-h100", 64, 8.0, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}, true},
      {"pcie-8x-h100", 2, 1.0, {{0, 2, 4, 6}, {1, 3, 5, 7}}, false},
  };
  for (const auto& k : cases) {
    topo::ClusterOverrides o;
    o.nodes = k.nodes;
    o.fabric = topo::FabricKind::fat_tree;
    o.oversubscription = k.oversubscription;
    const auto t = preset(k.preset, o);
    TrainingContext ctx(t);
    std::vector<std::vector<long>> groups;
    for (const auto& local : k.locals) {
      std::vector<long> g;
      for (long n = 0; n < k.nodes; ++n)
        for (long i : local) g.push_back(n * t.gpus_per_node() + i);
      groups.push_back(g);
    }
    const double bytes = 25.0 * 1024 * 1024;
    const double ag = ctx.simulated_contention(groups, comm::Op::all_gather, comm::Algo::ring, comm::Proto::simple,
                                               bytes, "bfloat16");
    for (auto op : {comm::Op::all_reduce, comm::Op::reduce_scatter}) {
      const double own = ctx.simulated_contention(groups, op, comm::Algo::ring, comm::Proto::simple, bytes, "bfloat16");
      EXPECT_NEAR(own, ag, 0.01 * ag) << k.preset << " op " << static_cast<int>(op);
    }
    // Two A100s share each PCIe switch on their way to their NICs (1.06 here); 64 H100 nodes
    // over an 8:1 tree share the spine (1.14).
    if (k.stretched)
      EXPECT_GT(ag, 1.01) << k.preset;
    else
      EXPECT_DOUBLE_EQ(ag, 1.0) << k.preset;
  }
}

// A sample of alike nodes stands for all of them (contention_sample.hpp): data-parallel groups
// of 16 to 128 nodes, as Megatron's rank order makes them (TP innermost, so TP groups of one
// stage are the concurrent DP groups), priced on 8 of their nodes and on every rank, for each
// collective the gradient reduction runs, on NVSwitch nodes over InfiniBand (fat-tree and
// rail-optimized) and PCIe nodes whose GPUs share switches and NICs over RoCE.
TEST(Contention, SampledNodesGiveTheFullFactor) {
  struct Case {
    const char* preset;
    long nodes;
    topo::FabricKind fabric;
    long tp;
    long stage_nodes;             // the nodes of one pipeline stage
    double oversubscription = 1;  // a leaf's down:up ratio
  };
  const std::vector<Case> cases{
      {"dgx-a100", 32, topo::FabricKind::fat_tree, 1, 32},
      {"dgx-a100", 32, topo::FabricKind::fat_tree, 2, 32},
      {"dgx-a100", 64, topo::FabricKind::fat_tree, 8, 32},
      {"dgx-a100", 128, topo::FabricKind::fat_tree, 4, 64},
      {"dgx-h100", 32, topo::FabricKind::rail, 2, 32},
      {"dgx-h100", 32, topo::FabricKind::rail, 8, 16},
      {"pcie-8x-l40s", 32, topo::FabricKind::fat_tree, 1, 32},
      {"pcie-8x-l40s", 32, topo::FabricKind::fat_tree, 2, 16},
      {"pcie-8x-a100", 16, topo::FabricKind::fat_tree, 4, 16},
      {"pcie-8x-l40s", 32, topo::FabricKind::fat_tree, 4, 32},
      {"pcie-8x-h100", 32, topo::FabricKind::fat_tree, 8, 32},
      // Oversubscribed leaves: rings are sampled, trees run every rank.
      {"dgx-a100", 64, topo::FabricKind::fat_tree, 2, 64, 2},
      {"dgx-h100", 128, topo::FabricKind::fat_tree, 4, 64, 8},
      {"pcie-8x-h100", 64, topo::FabricKind::fat_tree, 8, 64, 4},
  };
  int sampled = 0;
  int stretched = 0;
  int oversubscribed_rings = 0;
  for (const auto& k : cases) {
    topo::ClusterOverrides o;
    o.nodes = k.nodes;
    o.fabric = k.fabric;
    if (k.oversubscription > 1) o.oversubscription = k.oversubscription;
    const auto t = preset(k.preset, o);
    const long gpn = t.gpus_per_node();
    std::vector<std::vector<long>> groups(static_cast<std::size_t>(k.tp));
    for (long g = 0; g < k.stage_nodes * gpn; ++g) groups[static_cast<std::size_t>(g % k.tp)].push_back(g);
    for (auto op : {comm::Op::all_reduce, comm::Op::reduce_scatter, comm::Op::all_gather}) {
      const double bytes = 25.0 * 1024 * 1024;
      TrainingContext fast(t);
      TrainingContext full(t);
      full.sample_contention(false);
      const double f = fast.contention(groups, op, bytes, "bfloat16");
      const double exact = full.contention(groups, op, bytes, "bfloat16");
      EXPECT_NEAR(f, exact, 0.01 * exact)
          << k.preset << " x" << k.nodes << " TP " << k.tp << " op " << static_cast<int>(op);
      if (sample_groups(groups, gpn, true)) ++sampled;
      if (exact > 1.01) ++stretched;
      if (k.oversubscription > 1 && fast.collective(groups.front(), op, bytes, "bfloat16").algo == comm::Algo::ring &&
          exact > 1.01)
        ++oversubscribed_rings;
    }
  }
  EXPECT_GT(sampled, 20);              // the sample was taken, not skipped
  EXPECT_GT(stretched, 10);            // and the groups did slow each other
  EXPECT_GE(oversubscribed_rings, 1);  // a sampled ring whose uplinks bind
}

}  // namespace
}  // namespace gf::work
