// The training model as the scheduler's runtime model (issue 14, item 2): a training job's step
// follows its placement, and jobs that share fabric links slow one another.
#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "sched/cluster_state.hpp"
#include "sched/policy.hpp"
#include "sched/simulator.hpp"
#include "sched/training_runtime.hpp"
#include "test_support.hpp"
#include "work/model_library.hpp"
#include "work/train_step.hpp"

using gf::test::input_error;
using gf::test::preset;

namespace gf::sched {
namespace {

// DGX H100 nodes (8 GPUs, 8 NDR NICs) under a two-tier fat-tree of radix-64 switches. At 7:1
// a leaf has 56 ports down (7 nodes) and 8 up: one job crossing to another leaf fits its 8 NICs'
// traffic in the uplinks, two such jobs share them. At 15:1 a leaf has 4 uplinks, too few even
// for one job.
topo::Topology fabric(long nodes, double oversubscription) {
  topo::ClusterOverrides o;
  o.nodes = nodes;
  o.fabric = topo::FabricKind::fat_tree;
  o.tiers = 2;
  o.oversubscription = oversubscription;
  return preset("dgx-h100", o);
}

Job training_job(const std::string& name, const std::string& model, int pods, int pod_gpus, long tp, long steps = 100) {
  Job j;
  j.name = name;
  j.line = 2;
  j.pods = pods;
  j.pod.gpus = pod_gpus;
  TrainingWork w;
  w.model = model;
  w.steps = steps;
  w.tp = tp;
  j.training = w;
  return j;
}

// One pod per (node, GPUs) pair.
Placement on(const std::vector<std::pair<int, std::vector<int>>>& pods) {
  Placement p;
  for (const auto& [node, gpus] : pods) {
    PodPlacement pp;
    pp.node = node;
    pp.gpus = gpus;
    p.push_back(pp);
  }
  return p;
}

std::vector<int> gpus(int first, int count) {
  std::vector<int> g(static_cast<std::size_t>(count));
  std::iota(g.begin(), g.end(), first);
  return g;
}

// The cluster's nodes by leaf switch, those whose NICs all reach the same leaf (when the leaf's
// ports are not a multiple of the node's NICs, a node may straddle two).
std::map<long, std::vector<int>> by_leaf(const topo::Topology& t) {
  std::map<long, std::vector<int>> out;
  for (long n = 0; n < t.nodes(); ++n) {
    const long leaf = t.fabric()->leaf_of(n, 0);
    bool whole = true;
    for (int nic = 1; nic < t.node().nics(); ++nic) whole = whole && t.fabric()->leaf_of(n, nic) == leaf;
    if (whole) out[leaf].push_back(static_cast<int>(n));
  }
  return out;
}

using Neighbours = std::vector<std::pair<std::size_t, const Placement*>>;

TEST(TrainingPlacement, EmptyPlacementIsTheFirstGpus) {
  const auto t = fabric(4, 7.0);
  const auto m = work::library_model("gpt3-1.3b");
  work::TrainOptions o;
  o.layout.tp = 2;
  o.layout.dp = 8;
  o.gpus = 16;
  const auto first = work::train_step(t, m, o);
  o.placement.resize(16);
  std::iota(o.placement.begin(), o.placement.end(), 0L);
  const auto placed = work::train_step(t, m, o);
  EXPECT_EQ(first.step_s, placed.step_s);
  EXPECT_EQ(first.dp_communication_s, placed.dp_communication_s);
  EXPECT_EQ(first.breakdown.tp_s, placed.breakdown.tp_s);
  // The same ranks on nodes 2 and 3 instead of 0 and 1 (the same leaf): the same step.
  for (long& g : o.placement) g += 16;
  EXPECT_NEAR(work::train_step(t, m, o).step_s, first.step_s, 1e-12 * first.step_s);
}

TEST(TrainingPlacement, RefusesABadPlacement) {
  const auto t = fabric(2, 7.0);
  const auto m = work::library_model("gpt3-1.3b");
  work::TrainOptions o;
  o.layout.dp = 2;
  o.placement = {3, 3};
  EXPECT_NE(input_error([&] { work::train_step(t, m, o); }).find("twice"), std::string::npos);
  o.placement = {0, 99};
  EXPECT_NE(input_error([&] { work::train_step(t, m, o); }).find("99"), std::string::npos);
}

class TrainingRuntimeTest : public ::testing::Test {
protected:
  TrainingRuntimeTest() : t_(fabric(16, 7.0)), nodes_(nodes_from_topology(t_)), leaves_(by_leaf(t_)) {}
  const topo::Topology t_;
  const std::vector<Node> nodes_;
  const std::map<long, std::vector<int>> leaves_;
  int node(long leaf, std::size_t i) const { return leaves_.at(leaf).at(i); }
};

TEST_F(TrainingRuntimeTest, ClusterHasLeavesOfSeveralNodes) {
  ASSERT_GE(leaves_.size(), 3U);
  for (const auto& [leaf, members] : leaves_) EXPECT_GE(members.size(), 2U) << "leaf " << leaf;
}

TEST_F(TrainingRuntimeTest, SpreadOverLeavesCostsWhatTheUplinksLack) {
  const std::vector<Job> jobs{training_job("a", "llama2-7b", 2, 8, 8)};
  TrainingRuntime r(t_, jobs, nodes_);
  const auto packed = on({{node(0, 0), gpus(0, 8)}, {node(0, 1), gpus(0, 8)}});
  const auto spread = on({{node(0, 0), gpus(0, 8)}, {node(1, 0), gpus(0, 8)}});
  const double compact = r.compact_step_s(0);
  ASSERT_GT(compact, 0);
  EXPECT_NEAR(r.step_s(0, packed), compact, 1e-9 * compact);
  EXPECT_NEAR(r.speed(0, packed, {}), 1.0, 1e-9);
  // 8 uplinks carry the 8 NICs' gradient traffic: only the extra switch hops show.
  EXPECT_NEAR(r.speed(0, spread, {}), 1.0, 1e-3);

  // 4 uplinks for 8 NICs: the gradient all-reduce takes twice as long and outgrows the backward.
  const auto tapered = fabric(16, 15.0);
  const auto leaves = by_leaf(tapered);
  TrainingRuntime narrow(tapered, jobs, nodes_from_topology(tapered));
  const auto narrow_packed = on({{leaves.at(0).at(0), gpus(0, 8)}, {leaves.at(0).at(1), gpus(0, 8)}});
  const auto narrow_spread = on({{leaves.at(0).at(0), gpus(0, 8)}, {leaves.at(1).at(0), gpus(0, 8)}});
  EXPECT_NEAR(narrow.speed(0, narrow_packed, {}), 1.0, 1e-9);
  EXPECT_NEAR(narrow.compact_step_s(0), compact, 1e-9 * compact);  // inside one leaf, the taper is unseen
  EXPECT_LT(narrow.speed(0, narrow_spread, {}), 0.8);
}

TEST_F(TrainingRuntimeTest, TensorParallelAcrossNodesIsMuchSlower) {
  // TP 8 in pods of 4 GPUs: every TP group spans two nodes (InfiniBand instead of NVSwitch).
  const std::vector<Job> jobs{training_job("a", "llama2-7b", 4, 4, 8)};
  TrainingRuntime r(t_, jobs, nodes_);
  const auto split =
      on({{node(0, 0), gpus(0, 4)}, {node(0, 1), gpus(0, 4)}, {node(0, 2), gpus(0, 4)}, {node(0, 3), gpus(0, 4)}});
  const auto compact =
      on({{node(0, 0), gpus(0, 4)}, {node(0, 0), gpus(4, 4)}, {node(0, 1), gpus(0, 4)}, {node(0, 1), gpus(4, 4)}});
  EXPECT_NEAR(r.speed(0, compact, {}), 1.0, 1e-9);
  // Every layer's four TP all-reduces cross InfiniBand instead of NVSwitch. (0.92 since the
  // pipeline fill of a mid-size tree across nodes stopped costing a second copy of its data:
  // src/comm/stage_fill.)
  EXPECT_LT(r.speed(0, split, {}), 0.95);
  const auto spread = on({{node(0, 0), gpus(0, 8)}, {node(1, 0), gpus(0, 8)}});
  EXPECT_LT(r.speed(0, split, {}),
            TrainingRuntime(t_, {training_job("b", "llama2-7b", 2, 8, 8)}, nodes_).speed(0, spread, {}));
}

TEST_F(TrainingRuntimeTest, TheSlowestTensorParallelGroupPacesTheStep) {
  // The first TP group inside one node, the second split over two: as slow as both split.
  const std::vector<Job> jobs{training_job("a", "llama2-7b", 4, 4, 8)};
  TrainingRuntime r(t_, jobs, nodes_);
  const auto one_split =
      on({{node(0, 0), gpus(0, 4)}, {node(0, 0), gpus(4, 4)}, {node(0, 1), gpus(0, 4)}, {node(0, 2), gpus(0, 4)}});
  const auto compact =
      on({{node(0, 0), gpus(0, 4)}, {node(0, 0), gpus(4, 4)}, {node(0, 1), gpus(0, 4)}, {node(0, 1), gpus(4, 4)}});
  // Rank 0's TP group alone would price it as the compact placement.
  EXPECT_GT(r.step_s(0, one_split), 1.3 * r.step_s(0, compact));
}

TEST_F(TrainingRuntimeTest, NeighboursOnSharedUplinksSlowAJobAndOthersDoNot) {
  const std::vector<Job> jobs{training_job("a", "llama2-7b", 2, 8, 8), training_job("b", "llama2-7b", 2, 8, 8),
                              training_job("c", "llama2-7b", 2, 8, 8)};
  TrainingRuntime r(t_, jobs, nodes_);
  // a and b each span leaves 0 and 1: their all-reduces share both leaves' uplinks.
  const auto a = on({{node(0, 0), gpus(0, 8)}, {node(1, 0), gpus(0, 8)}});
  const auto b = on({{node(0, 1), gpus(0, 8)}, {node(1, 1), gpus(0, 8)}});
  // c spans leaves 2 and 3 (or stays under leaf 2): no link in common with a.
  const auto c = leaves_.size() > 3 ? on({{node(2, 0), gpus(0, 8)}, {node(3, 0), gpus(0, 8)}})
                                    : on({{node(2, 0), gpus(0, 8)}, {node(2, 1), gpus(0, 8)}});
  const double alone = r.speed(0, a, {});
  const double with_b = r.speed(0, a, Neighbours{{1, &b}});
  const double with_c = r.speed(0, a, Neighbours{{2, &c}});
  EXPECT_LT(with_b, alone * 0.98);
  EXPECT_NEAR(with_c, alone, 1e-9);
  EXPECT_NEAR(r.speed(0, a, Neighbours{{1, &b}, {2, &c}}), with_b, 1e-9);
  // Symmetric: b is slowed by a as a by b.
  EXPECT_NEAR(r.speed(1, b, Neighbours{{0, &a}}), with_b, 1e-6);
  // Asked again, nothing new is priced.
  const auto evaluations = r.evaluations();
  const auto flows = r.flow_runs();
  EXPECT_EQ(r.speed(0, a, Neighbours{{1, &b}}), with_b);
  EXPECT_EQ(r.evaluations(), evaluations);
  EXPECT_EQ(r.flow_runs(), flows);
}

TEST_F(TrainingRuntimeTest, SingleNodeNeighbourUnderTheSameLeafDoesNotSlowAJob) {
  // b runs inside one node: its traffic never leaves it, though the node sits under a's leaf.
  const std::vector<Job> jobs{training_job("a", "llama2-7b", 2, 8, 8), training_job("b", "gpt3-1.3b", 1, 8, 1)};
  TrainingRuntime r(t_, jobs, nodes_);
  const auto a = on({{node(0, 0), gpus(0, 8)}, {node(1, 0), gpus(0, 8)}});
  const auto b = on({{node(0, 1), gpus(0, 8)}});
  EXPECT_NEAR(r.speed(0, a, Neighbours{{1, &b}}), r.speed(0, a, {}), 1e-9);
}

TEST_F(TrainingRuntimeTest, FillDurationsIsStepsTimesTheCompactStep) {
  std::vector<Job> jobs{training_job("a", "llama2-7b", 2, 8, 8, 500), Job{}};
  jobs[1].duration = 42;
  TrainingRuntime::fill_durations(t_, jobs, "jobs.csv");
  TrainingRuntime r(t_, jobs, nodes_);
  EXPECT_NEAR(jobs[0].duration, 500 * r.compact_step_s(0), 1e-9 * jobs[0].duration);
  EXPECT_GT(jobs[0].duration, 0);
  EXPECT_EQ(jobs[1].duration, 42);
  EXPECT_FALSE(r.models(jobs[1]));
  EXPECT_TRUE(r.models(jobs[0]));
}

TEST_F(TrainingRuntimeTest, ImpossibleLayoutsAreInputErrorsAtTheJobsLine) {
  auto error = [&](Job j) {
    j.line = 7;
    std::vector<Job> jobs{j};
    try {
      TrainingRuntime::fill_durations(t_, jobs, "jobs.csv");
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().file, "jobs.csv");
      EXPECT_EQ(e.where().line, 7);
      return e.field() + ": " + e.problem();
    }
    ADD_FAILURE() << "expected an InputError";
    return std::string();
  };
  EXPECT_NE(error(training_job("a", "llama2-7b", 2, 8, 3)).find("gpus:"), std::string::npos);  // 16 % 3
  EXPECT_NE(error(training_job("a", "llama2-7b", 1, 6, 6)).find("tp:"), std::string::npos);    // 32 heads
  EXPECT_NE(error(training_job("a", "no-such-model", 1, 8, 1)).find("model:"), std::string::npos);
  // 70B parameters with their gradients and Adam states on one GPU.
  const std::string memory = error(training_job("a", "llama2-70b", 1, 1, 1));
  EXPECT_NE(memory.find("model:"), std::string::npos);
  EXPECT_NE(memory.find("GiB per GPU"), std::string::npos);  // GiB, as nvidia-smi counts the GPU's memory
}

TEST_F(TrainingRuntimeTest, JobsTooLargeForTheClusterKeepNoDuration) {
  std::vector<Job> jobs{training_job("huge", "llama2-7b", 32, 8, 8)};  // 256 GPUs on 128
  TrainingRuntime::fill_durations(t_, jobs, "jobs.csv");
  EXPECT_EQ(jobs[0].duration, 0);
}

TEST(TrainingSchedule, TopologyAwarePlacementSlowsTrainingLessThanFirstFit) {
  // Every node is taken by other work but the last of the first leaf, the first and last of the
  // second and the first of the third; two two-node training jobs arrive. First-fit gives both
  // a node on each side of a leaf boundary, and both cross the second leaf's 8 uplinks; topology-
  // aware placement keeps the first inside the second leaf (its traffic stays under the leaf), so
  // the second crosses alone, and 8 uplinks carry one job's 8 NICs.
  const auto t = fabric(16, 7.0);
  const auto nodes = nodes_from_topology(t);
  const auto leaves = by_leaf(t);
  ASSERT_GE(leaves.size(), 3U);
  const std::vector<int> free{leaves.at(0).back(), leaves.at(1).front(), leaves.at(1).back(), leaves.at(2).front()};
  ClusterState cluster(nodes);
  PodRequest whole_node;
  whole_node.gpus = 8;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n) {
    if (std::find(free.begin(), free.end(), n) != free.end()) continue;
    PodPlacement taken;
    taken.node = n;
    taken.gpus = gpus(0, 8);
    taken.milli = 1000;  // each GPU whole
    cluster.allocate(whole_node, taken);
  }
  std::vector<Job> jobs{training_job("train-0", "llama2-7b", 2, 8, 8, 2000),
                        training_job("train-1", "llama2-7b", 2, 8, 8, 2000)};
  jobs[1].line = 3;
  jobs[1].submit = 1;
  TrainingRuntime::fill_durations(t, jobs, "jobs.csv");
  std::map<std::string, ScheduleResult> results;
  for (const std::string name : {"topology", "first-fit"}) {
    TrainingRuntime runtime(t, jobs, nodes, "jobs.csv");
    SimOptions o;
    o.runtime = &runtime;
    results[name] = simulate(cluster, jobs, *make_policy(name), o);
    for (const auto& outcome : results[name].jobs) EXPECT_EQ(outcome.state, JobState::done) << name;
  }
  const auto leaves_of = [&](const std::string& policy, std::size_t job) {
    std::set<long> out;
    for (const auto& pod : results[policy].jobs[job].placement)
      out.insert(nodes[static_cast<std::size_t>(pod.node)].leaf);
    return out.size();
  };
  EXPECT_EQ(leaves_of("first-fit", 0), 2U);
  EXPECT_EQ(leaves_of("first-fit", 1), 2U);
  EXPECT_EQ(leaves_of("topology", 0), 1U);
  const auto& topology = results["topology"].metrics;
  const auto& first_fit = results["first-fit"].metrics;
  EXPECT_NEAR(topology.slowdown.mean, 1.0, 1e-3);
  EXPECT_GT(first_fit.slowdown.mean, 1.1);
  EXPECT_LT(topology.jct_s.mean, first_fit.jct_s.mean);
}

}  // namespace
}  // namespace gf::sched
