// The scheduling layer (issue 14): MIG layouts and the partitioner, trace and node-list reading
// with its errors, the fragmentation measure, every queue discipline and placement policy on
// small clusters where the right answer is known, the fill experiment on the real PAI trace,
// and the `gpufabric schedule` command.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "sched/csv_table.hpp"
#include "sched/fill_experiment.hpp"
#include "sched/fragmentation.hpp"
#include "sched/mig_layout.hpp"
#include "sched/simulator.hpp"
#include "sched/trace_reader.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"
#include "work/compute_efficiency.hpp"
#include "work/mig_profile.hpp"

using namespace gf;
using namespace gf::sched;

namespace {

const std::string kTraceDir = std::string(GPUFABRIC_SOURCE_DIR) + "/data/traces/alibaba-pai-2023/";

// `count` nodes of `gpus` GPUs each, `leaves` leaf switches (nodes spread in order).
std::vector<Node> nodes(int count, int gpus, int leaves = 1, long cpu = 64000, long memory = 262144) {
  std::vector<Node> out;
  for (int i = 0; i < count; ++i) {
    Node n;
    n.name = "n" + std::to_string(i);
    n.model = "G";
    n.cpu_milli = cpu;
    n.memory_mib = memory;
    n.gpus.resize(static_cast<std::size_t>(gpus));
    n.leaf = i * leaves / count;
    out.push_back(std::move(n));
  }
  return out;
}

Job job(const std::string& name, double submit, double duration, int gpus, int pods = 1, int share = 0) {
  Job j;
  j.name = name;
  j.submit = submit;
  j.duration = duration;
  j.pods = pods;
  j.pod.gpus = gpus;
  j.pod.share_milli = share;
  j.pod.cpu_milli = 1000;
  j.pod.memory_mib = 1024;
  return j;
}

ScheduleResult run(const std::vector<Node>& ns, const std::vector<Job>& jobs, const std::string& policy,
                   SimOptions o = {}) {
  const auto p = make_policy(policy);
  return simulate(ClusterState(ns), jobs, *p, o);
}

}  // namespace

TEST(Mig, StartsFollowNvidiaSmiPlacements) {
  const MigTable* t = mig_table("a100-sxm4-80gb");
  ASSERT_NE(t, nullptr);
  const int one = static_cast<int>(t->find("1g.10gb") - t->profiles.data());
  const int three = static_cast<int>(t->find("3g.40gb") - t->profiles.data());
  const int seven = static_cast<int>(t->find("7g.80gb") - t->profiles.data());
  MigGpu g(*t);
  for (int i = 0; i < 7; ++i) {
    const auto s = g.fit(one);
    ASSERT_TRUE(s.has_value()) << i;
    EXPECT_EQ(*s, i);
    g.add(one, *s);
  }
  EXPECT_FALSE(g.fit(one).has_value());  // seven at most; slice 7 is stranded
  EXPECT_EQ(g.memory_mask(), 0x7F);
  MigGpu h(*t);
  h.add(one, 0);
  h.add(one, 4);
  EXPECT_FALSE(h.fit(three).has_value());   // 3g needs slices 0-3 or 4-7
  EXPECT_TRUE(h.fits_after_repack(three));  // moving the 1g at 4 to 1 frees 4-7
  EXPECT_FALSE(h.fit(seven).has_value());
  EXPECT_FALSE(h.fits_after_repack(seven));  // 7 compute slices are not there
  EXPECT_EQ(mig_table("rtx-4090"), nullptr);
}

TEST(Mig, PartitionerPacksAndSaysWhatReconfiguringWouldFree) {
  const MigTable* t = mig_table("h100-sxm5");
  ASSERT_NE(t, nullptr);
  // 3g + 3g fill the memory slices of one GPU; a 1g has compute left but no memory.
  auto r = pack_mig(*t, {"3g.40gb", "3g.40gb", "1g.10gb"}, 1, MigStrategy::mixed);
  EXPECT_EQ(r.unplaced, 1);
  EXPECT_EQ(r.placed_gpu[2], -1);
  EXPECT_EQ(describe(*t, r.gpus[0]), "3g.40gb@0 3g.40gb@4");
  // A 4g and a 3g share a GPU (the 4+3 layout); seven 1g fill another.
  r = pack_mig(*t, {"4g.40gb", "3g.40gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"},
               2, MigStrategy::mixed);
  EXPECT_EQ(r.unplaced, 0);
  // Under `single` a GPU takes one profile only: 4g and 3g need two GPUs.
  r = pack_mig(*t, {"4g.40gb", "3g.40gb"}, 1, MigStrategy::single);
  EXPECT_EQ(r.unplaced, 1);
  r = pack_mig(*t, {"4g.40gb", "3g.40gb"}, 2, MigStrategy::single);
  EXPECT_EQ(r.unplaced, 0);
  EXPECT_NE(r.placed_gpu[0], r.placed_gpu[1]);
  EXPECT_NE(test::input_error([&] { pack_mig(*t, {"5g.50gb"}, 1, MigStrategy::mixed); }).find("1g.10gb"),
            std::string::npos);
}

TEST(Csv, QuotedFieldsAndLineNumbers) {
  const auto t = parse_csv("a,b,c\n\n1,\"x, y\",\"say \"\"hi\"\"\"\n2,z,w\n", "t.csv");
  ASSERT_EQ(t.rows.size(), 2U);
  EXPECT_EQ(t.rows[0].fields[1], "x, y");
  EXPECT_EQ(t.rows[0].fields[2], "say \"hi\"");
  EXPECT_EQ(t.rows[0].line, 3);
  EXPECT_EQ(t.rows[1].line, 4);
  const std::string e = test::input_error([] { parse_csv("a,b\n1,\"open\n", "bad.csv"); });
  EXPECT_NE(e.find("bad.csv"), std::string::npos) << e;
  EXPECT_NE(test::input_error([] { parse_csv("", "empty.csv"); }).find("empty"), std::string::npos);
  // Not UTF-8: refused at its line (fields reach JSON output, which must be UTF-8).
  const std::string u = test::input_error([] { parse_csv("a,b\n1,\xff\n", "latin1.csv"); });
  EXPECT_NE(u.find("latin1.csv:2"), std::string::npos) << u;
  EXPECT_NE(u.find("UTF-8"), std::string::npos) << u;
}

TEST(Trace, ReadsThePaiFormatAndNamesBadRows) {
  const std::string head =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n";
  const auto t = parse_trace(parse_csv(head + "p0,12000,16384,1,1000,,LS,Running,0,100,10\n"
                                              "p1,6000,12288,1,460,V100M16|V100M32,BE,Succeeded,5,50,5\n"
                                              "p2,8000,30517,1,320,,BE,Pending,7,9,\n"
                                              "p3,4000,1024,8,1000,,BE,Running,8,20,8\n",
                                       "pods.csv"),
                             false);
  ASSERT_EQ(t.jobs.size(), 4U);
  EXPECT_EQ(t.jobs[0].pod.gpus, 1);
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 90);  // deletion - scheduled
  EXPECT_DOUBLE_EQ(t.jobs[0].recorded_queue, 10);
  EXPECT_EQ(t.jobs[1].pod.share_milli, 460);
  EXPECT_EQ(t.jobs[1].pod.gpu_models, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_DOUBLE_EQ(t.jobs[2].deadline, 9);  // never scheduled: it leaves at its deletion
  EXPECT_EQ(t.jobs[3].pod.gpus, 8);
  // A bad row is refused with its line, or skipped and counted with --skip-bad.
  const std::string bad = head + "p0,12000,16384,1,1000,,LS,Running,0,100,10\np1,x,1,1,1000,,LS,Running,0,1,0\n";
  const std::string e = test::input_error([&] { parse_trace(parse_csv(bad, "pods.csv"), false); });
  EXPECT_NE(e.find("pods.csv:3"), std::string::npos) << e;
  EXPECT_NE(e.find("cpu_milli"), std::string::npos) << e;
  const auto skipped = parse_trace(parse_csv(bad, "pods.csv"), true);
  EXPECT_EQ(skipped.jobs.size(), 1U);
  ASSERT_EQ(skipped.skipped.size(), 1U);
  EXPECT_NE(skipped.skipped[0].find("pods.csv:3"), std::string::npos);
  // Times out of order, shares on several GPUs, duplicate names.
  EXPECT_NE(test::input_error([&] {
              parse_trace(parse_csv(head + "p,1,1,1,1000,,LS,R,10,5,10\n", "p.csv"), false);
            }).find("deletion_time"),
            std::string::npos);
  EXPECT_NE(test::input_error([&] {
              parse_trace(parse_csv(head + "p,1,1,2,500,,LS,R,0,5,0\n", "p.csv"), false);
            }).find("gpu_milli"),
            std::string::npos);
  EXPECT_NE(test::input_error([&] {
              parse_trace(parse_csv(head + "p,1,1,1,1000,,LS,R,0,5,0\np,1,1,1,1000,,LS,R,0,5,0\n", "p.csv"), false);
            }).find("twice"),
            std::string::npos);
}

TEST(Trace, MigProfilesCountAtMostSevenSlices) {
  // Found by fuzz_job_trace: a slice count of 19 digits overflowed int (undefined behaviour)
  // instead of being refused as no profile. A GPU has at most 7 compute slices.
  EXPECT_EQ(mig_milli("7g.80gb"), 1000);
  EXPECT_EQ(mig_milli("1g.10gb"), 143);
  EXPECT_EQ(mig_milli("8g.80gb"), 0);
  EXPECT_EQ(mig_milli("9223372036854775807g.10gb"), 0);
  const std::string e = test::input_error(
      [] { parse_trace(parse_csv("name,submit,duration,mig\na,0,1,9223372036854775807g.10gb\n", "j.csv"), false); });
  EXPECT_NE(e.find("j.csv:2"), std::string::npos) << e;
  EXPECT_NE(e.find("mig"), std::string::npos) << e;
}

TEST(Trace, GenericFormatAndNodeLists) {
  const auto t = parse_trace(parse_csv("name,submit,duration,gpus,pods,gpu_milli,mig\n"
                                       "a,0,100,8,4,,\nb,5,10,,,250,\nc,6,10,,,,3g.40gb\n",
                                       "jobs.csv"),
                             false);
  ASSERT_EQ(t.jobs.size(), 3U);
  EXPECT_EQ(t.jobs[0].pods, 4);
  EXPECT_DOUBLE_EQ(t.jobs[0].gpu_demand(), 32);
  EXPECT_EQ(t.jobs[1].pod.share_milli, 250);
  EXPECT_EQ(t.jobs[2].pod.mig, "3g.40gb");
  EXPECT_NEAR(t.jobs[2].gpu_demand(), 3.0 / 7, 1e-3);
  EXPECT_NE(test::input_error([] {
              parse_trace(parse_csv("name,submit,duration,gpus,gpu_milli\na,0,1,2,500\n", "j.csv"), false);
            }).find("j.csv:2"),
            std::string::npos);
  EXPECT_NE(test::input_error([] { parse_trace(parse_csv("name,gpus\na,1\n", "j.csv"), false); }).find("submit"),
            std::string::npos);
  std::vector<std::string> skipped;
  const auto ns = parse_nodes(parse_csv("sn,cpu_milli,memory_mib,gpu,model,leaf\nn0,64000,1000,8,a100-sxm4-80gb,0\n"
                                        "n1,64000,1000,2,T4,1\n",
                                        "nodes.csv"),
                              false, skipped);
  ASSERT_EQ(ns.size(), 2U);
  EXPECT_NE(ns[0].mig_table, nullptr);  // a catalog GPU with MIG
  EXPECT_EQ(ns[1].mig_table, nullptr);
  EXPECT_EQ(ns[1].leaf, 1);
  EXPECT_NE(test::input_error([&] {
              parse_nodes(parse_csv("sn,cpu_milli,memory_mib,gpu,model,leaf\nn0,1,1,8,G,0\nn1,1,1,8,G,\n", "n.csv"),
                          false, skipped);
            }).find("leaf"),
            std::string::npos);
}

TEST(Fragmentation, MatchesTheFgdDefinitionOnAHandExample) {
  // Tasks: half want 0.5 GPU, half want one whole GPU.
  std::vector<Job> jobs{job("a", 0, 1, 0, 1, 500), job("b", 0, 1, 1)};
  const auto w = target_workload(jobs);
  ASSERT_EQ(w.classes.size(), 2U);
  auto ns = nodes(1, 2);
  ClusterState c(ns);
  // One GPU with 0.3 left, one whole: the half-GPU task cannot use the 0.3 (fragment 300) and
  // the whole-GPU task neither (300): expected 300.
  PodPlacement p{0, {0}, 700, -1, -1};
  PodRequest r;
  r.share_milli = 700;
  c.allocate(r, p);
  EXPECT_NEAR(fragmentation(view(c.node(0)), w), 300, 1e-9);
  // Take the whole GPU too: the whole-GPU task cannot run at all (all 300 free is fragment),
  // the half-GPU task neither: 300.
  PodRequest whole;
  whole.gpus = 1;
  c.allocate(whole, PodPlacement{0, {1}, 1000, -1, -1});
  EXPECT_NEAR(fragmentation(view(c.node(0)), w), 300, 1e-9);
}

TEST(Schedule, FifoBlocksWhereFirstFitGoesAround) {
  // Two 8-GPU nodes; a 16-GPU job holds both, an 8-GPU gang of two waits, a 1-GPU job behind it.
  const auto ns = nodes(2, 8);
  std::vector<Job> jobs{job("big", 0, 100, 8, 2), job("gang", 1, 50, 8, 2), job("small", 2, 10, 1)};
  jobs[0].duration = 100;
  // The small one cannot start before the first job ends either way; make room for it alone.
  jobs[0].pods = 1;  // the first holds one node only
  const auto fifo = run(ns, jobs, "fifo");
  const auto ff = run(ns, jobs, "first-fit");
  EXPECT_DOUBLE_EQ(ff.jobs[2].start, 2);      // goes around the waiting gang
  EXPECT_DOUBLE_EQ(fifo.jobs[2].start, 150);  // waits behind it: gang runs 100..150
  EXPECT_DOUBLE_EQ(fifo.jobs[1].start, 100);
  // All or none: the gang never runs half.
  for (const auto& r : {fifo, ff}) EXPECT_EQ(r.jobs[1].placement.size(), 2U);
}

TEST(Schedule, RequestsNoNodeCanHoldAreReportedNotQueued) {
  const auto ns = nodes(2, 8);
  std::vector<Job> jobs{job("nine", 0, 10, 9), job("gang", 0, 10, 8, 3), job("ok", 0, 10, 8, 2)};
  jobs.push_back(job("cpu", 0, 10, 1));
  jobs.back().pod.cpu_milli = 1'000'000;
  Job mig = job("mig", 0, 10, 0);
  mig.pod.mig = "1g.10gb";
  jobs.push_back(mig);
  const auto r = run(ns, jobs, "first-fit");
  EXPECT_EQ(r.jobs[0].state, JobState::unschedulable);
  EXPECT_NE(r.jobs[0].why.find("9 GPUs"), std::string::npos) << r.jobs[0].why;
  EXPECT_EQ(r.jobs[1].state, JobState::unschedulable);
  EXPECT_NE(r.jobs[1].why.find("fewer than 3"), std::string::npos) << r.jobs[1].why;
  EXPECT_EQ(r.jobs[2].state, JobState::done);
  EXPECT_EQ(r.jobs[3].state, JobState::unschedulable);
  EXPECT_EQ(r.jobs[4].state, JobState::unschedulable);
  EXPECT_NE(r.jobs[4].why.find("MIG"), std::string::npos);
  EXPECT_EQ(r.metrics.unschedulable, 4);
}

TEST(Schedule, BackfillRunsShortJobsAroundTheReservation) {
  // One 8-GPU node: a 6-GPU job runs 0..100; an 8-GPU job waits for it; a 2-GPU job that ends
  // by 100 may backfill, a 2-GPU job running to 300 may not (it would delay the 8-GPU one).
  const auto ns = nodes(1, 8);
  std::vector<Job> jobs{job("six", 0, 100, 6), job("eight", 1, 50, 8), job("short", 2, 50, 2), job("long", 3, 300, 2)};
  const auto r = run(ns, jobs, "backfill");
  EXPECT_DOUBLE_EQ(r.jobs[2].start, 2);
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 100);
  EXPECT_GE(r.jobs[3].start, 150);
  // Kubernetes' queue starts the long one as soon as the short one leaves and delays the
  // 8-GPU job until the long one ends.
  const auto k = run(ns, jobs, "first-fit");
  EXPECT_DOUBLE_EQ(k.jobs[3].start, 52);
  EXPECT_DOUBLE_EQ(k.jobs[1].start, 352);
}

TEST(Schedule, TiresiasPreemptsJobsThatHaveHadTheirShare) {
  // One 8-GPU node. A long 8-GPU job has run past the first threshold when a short one arrives:
  // under LAS the short one preempts it; FIFO makes it wait. A latency-sensitive job is never
  // preempted.
  const auto ns = nodes(1, 8);
  std::vector<Job> jobs{job("long", 0, 10000, 8), job("short", 1000, 100, 8)};
  SimOptions o;
  o.restart_s = 60;
  const auto las = run(ns, jobs, "tiresias", o);
  EXPECT_DOUBLE_EQ(las.jobs[1].start, 1000);
  EXPECT_EQ(las.jobs[0].preemptions, 1);
  EXPECT_NEAR(las.jobs[0].end, 10000 + 100 + 60, 1e-6);  // its work, the short job, the restart
  EXPECT_EQ(las.metrics.preemptions, 1);
  const auto fifo = run(ns, jobs, "fifo");
  EXPECT_DOUBLE_EQ(fifo.jobs[1].start, 10000);
  jobs[0].qos = "LS";
  const auto protected_run = run(ns, jobs, "tiresias", o);
  EXPECT_EQ(protected_run.jobs[0].preemptions, 0);
}

TEST(Schedule, TopologyKeepsAGangUnderOneLeaf) {
  // Four nodes, two leaves (0-1, 2-3). Node 0 is partly busy: first fit splits a two-node gang
  // over nodes 1 and 2 (two leaves); topology-aware puts it on nodes 2 and 3.
  const auto ns = nodes(4, 8, 2);
  std::vector<Job> jobs{job("busy", 0, 1000, 4), job("gang", 1, 100, 8, 2)};
  const auto ff = run(ns, jobs, "first-fit");
  const auto topo = run(ns, jobs, "topology");
  auto leaves = [&](const ScheduleResult& r) {
    std::set<long> l;
    for (const auto& p : r.jobs[1].placement) l.insert(ns[static_cast<std::size_t>(p.node)].leaf);
    return l.size();
  };
  EXPECT_EQ(leaves(ff), 2U);
  EXPECT_EQ(leaves(topo), 1U);
}

TEST(Schedule, TopologyPicksGpusUnderOnePcieSwitch) {
  // An 8-GPU PCIe server with GPUs on both sockets: a 2-GPU job lands on one switch.
  const auto t = test::preset("pcie-8x-h100");
  auto ns = nodes_from_topology(t);
  ClusterState c(ns);
  PodRequest two;
  two.gpus = 2;
  std::vector<PodPlacement> local;
  c.options(0, two, true, local);
  ASSERT_EQ(local.size(), 1U);
  const auto& g = ns[0].gpus;
  const auto& a = g[static_cast<std::size_t>(local[0].gpus[0])];
  const auto& b = g[static_cast<std::size_t>(local[0].gpus[1])];
  EXPECT_EQ(a.socket, b.socket);
  EXPECT_EQ(a.nic, b.nic);
}

TEST(Schedule, MigAndSharesShareNodesAsThePartitionerSays) {
  std::vector<Node> ns = nodes(1, 1);
  ns[0].model = "a100-sxm4-80gb";
  ns[0].mig_table = mig_table("a100-sxm4-80gb");
  std::vector<Job> jobs;
  for (int i = 0; i < 8; ++i) {
    Job j = job("m" + std::to_string(i), 0, 100, 0);
    j.pod.mig = "1g.10gb";
    jobs.push_back(j);
  }
  const auto r = run(ns, jobs, "best-fit");
  int at_zero = 0;
  for (int i = 0; i < 8; ++i) at_zero += r.jobs[static_cast<std::size_t>(i)].start == 0 ? 1 : 0;
  EXPECT_EQ(at_zero, 7);  // seven 1g instances at most on one GPU
  EXPECT_DOUBLE_EQ(r.jobs[7].start, 100);
  // A whole-GPU pod cannot use a GPU in MIG mode until its instances are gone.
  jobs.push_back(job("whole", 1, 10, 1));
  const auto w = run(ns, jobs, "first-fit");
  EXPECT_GE(w.jobs[8].start, 100);
}

TEST(Schedule, SameInputsSameAnswer) {
  const auto trace = read_trace(kTraceDir + "openb_pod_list_default.csv", false);
  std::vector<std::string> skipped;
  const auto ns = read_nodes(kTraceDir + "openb_node_list_gpu_node.csv", false, skipped);
  std::vector<Job> first(trace.jobs.begin(), trace.jobs.begin() + 800);
  SimOptions o;
  o.time_scale = 400;
  const auto a = run(ns, first, "fgd", o);
  const auto b = run(ns, first, "fgd", o);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].start, b.jobs[i].start);
    EXPECT_EQ(a.jobs[i].end, b.jobs[i].end);
  }
  EXPECT_EQ(a.metrics.completed + a.metrics.cancelled + a.metrics.unschedulable, 800);
}

TEST(Schedule, FgdLeavesFewerGpusUnallocatedThanFirstFitOnThePaiTrace) {
  // The paper's experiment on the real trace (one seed, to 100% of the GPUs arrived): FGD must
  // leave fewer GPUs unallocated than first fit and best fit, and random fit the most.
  const auto trace = read_trace(kTraceDir + "openb_pod_list_default.csv", false);
  std::vector<std::string> skipped;
  const ClusterState c(read_nodes(kTraceDir + "openb_node_list_gpu_node.csv", false, skipped));
  ASSERT_EQ(c.gpu_count(), 6212);
  FillOptions o;
  o.repeats = 1;
  o.up_to = 1.0;
  o.report_at = {0.9, 1.0};
  auto unallocated = [&](const std::string& p) {
    return fill_experiment(c, trace.jobs, *make_policy(p), o).points.back().unallocated_median;
  };
  const double fgd = unallocated("fgd"), ff = unallocated("first-fit"), bf = unallocated("best-fit"),
               rnd = unallocated("random-fit");
  EXPECT_LT(fgd, ff);
  EXPECT_LT(fgd, bf);
  EXPECT_GT(rnd, bf);
  EXPECT_GT(fgd, 2.0);  // the trace asks for 98% of the GPUs: some are always left
}

TEST(ScheduleCli, CompareTableJsonAndTimeline) {
  const test::ScratchDir dir;
  const std::string timeline = dir.file("timeline.csv");
  const std::string jobs =
      dir.write("jobs.csv", "name,submit,duration,gpus,pods\na,0,100,8,2\nb,10,50,4,1\nc,20,10,1,1\n");
  const std::string ns = dir.write("nodes.csv",
                                   "sn,cpu_milli,memory_mib,gpu,model,leaf\nn0,64000,262144,8,G,0\n"
                                   "n1,64000,262144,8,G,0\nn2,64000,262144,8,G,1\n");
  auto r = test::run_cli({"schedule", "--trace", jobs, "--nodes-file", ns, "--compare", "--timeline", timeline});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& p : policy_names()) EXPECT_NE(r.out.find("\n" + p + " "), std::string::npos) << p << "\n" << r.out;
  std::ifstream f(timeline);
  std::string head;
  std::getline(f, head);
  EXPECT_EQ(head, "policy,t_s,allocated_gpus,gpus_in_use,running,waiting,fragmented_gpus");
  r = test::run_cli({"schedule", "--trace", jobs, "--nodes-file", ns, "--policy", "topology", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policies"][0]["completed"], 3);
  // A policy name typo gets a suggestion and exit code 2.
  r = test::run_cli({"schedule", "--trace", jobs, "--nodes-file", ns, "--policy", "best-fti"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("best-fit"), std::string::npos) << r.err;
}

TEST(ScheduleCli, BadRowsAreRefusedOrSkippedAndCounted) {
  const test::ScratchDir dir;
  const std::string jobs = dir.write("bad.csv", "name,submit,duration,gpus\na,0,100,8\nb,zero,50,4\nc,20,10,1\n");
  const std::string ns = dir.write("nodes2.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,G\n");
  auto r = test::run_cli({"schedule", "--trace", jobs, "--nodes-file", ns});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.csv:3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("submit"), std::string::npos) << r.err;
  r = test::run_cli({"schedule", "--trace", jobs, "--nodes-file", ns, "--skip-bad"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 bad rows skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad.csv:3"), std::string::npos);
}

TEST(ScheduleCli, MigPackAndList) {
  auto r = test::run_cli({"schedule", "--mig-pack", "3g.40gb*2,1g.10gb*3", "--gpu", "a100-sxm4-80gb", "--gpus", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("placed 5 of 5"), std::string::npos) << r.out;
  r = test::run_cli({"schedule", "--mig-pack", "7g.80gb*2", "--gpu", "a100-sxm4-80gb"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("placed 1 of 2"), std::string::npos) << r.out;
  r = test::run_cli({"schedule", "--mig-pack", "1g.10gb", "--gpu", "a100-sxm4-80"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("a100-sxm4-80gb"), std::string::npos) << r.err;
  r = test::run_cli({"schedule", "--list"});
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("tiresias"), std::string::npos);
}

TEST(ScheduleCli, ReportsAndThePlannersReportDrawTheTimeline) {
  const test::ScratchDir dir;
  const std::string timeline = dir.file("tl2.csv"), html = dir.file("sched.html"), plan_html = dir.file("plan.html");
  const std::string jobs = dir.write("jobs3.csv", "name,submit,duration,gpus\na,0,100,8\nb,10,50,4\nc,20,10,1\n");
  const std::string ns = dir.write("nodes3.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,G\n");
  auto r = test::run_cli(
      {"schedule", "--trace", jobs, "--nodes-file", ns, "--compare", "--timeline", timeline, "--report", html});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream h(html);
  const std::string page((std::istreambuf_iterator<char>(h)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("GPUs allocated over time"), std::string::npos);
  EXPECT_NE(page.find("<polyline"), std::string::npos);
  EXPECT_NE(page.find("Unallocated GPUs as the cluster fills"), std::string::npos);
  r = test::run_cli({"plan", "case1-pcie-4-vs-8", "--quiet", "--report", plan_html, "--timeline", timeline});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream p(plan_html);
  const std::string plan_page((std::istreambuf_iterator<char>(p)), std::istreambuf_iterator<char>());
  EXPECT_NE(plan_page.find("Cluster scheduling"), std::string::npos);
  EXPECT_NE(plan_page.find("GPUs allocated over time"), std::string::npos);
  // Not a timeline: refused before the search, with the file named.
  r = test::run_cli({"plan", "case1-pcie-4-vs-8", "--report", plan_html, "--timeline", jobs});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("jobs3.csv"), std::string::npos) << r.err;
}

TEST(Schedule, MigRequestsThatARecutWouldPlaceAreNamed) {
  // One A100: 1g instances at slices 0 and 4 (the second placed where first fit puts it after
  // 1g at 1-3 came and went) block a 3g; re-cutting would place it.
  std::vector<Node> ns = nodes(1, 1);
  ns[0].model = "a100-sxm4-80gb";
  ns[0].mig_table = mig_table("a100-sxm4-80gb");
  std::vector<Job> jobs;
  for (int i = 0; i < 5; ++i) {
    Job j = job("small" + std::to_string(i), 0, i == 0 || i == 4 ? 1000 : 10, 0);
    j.pod.mig = "1g.10gb";
    jobs.push_back(j);
  }
  Job big = job("big", 20, 10, 0);
  big.pod.mig = "3g.40gb";
  jobs.push_back(big);
  const auto r = run(ns, jobs, "first-fit");
  EXPECT_GE(r.jobs[5].start, 1000);  // it waits for the long 1g instances
  EXPECT_NE(r.jobs[5].reconfigure.find("re-created"), std::string::npos) << r.jobs[5].reconfigure;
  EXPECT_EQ(r.metrics.mig_recut, 1);
}

// Every MIG profile's SMs and memory are -lgip's: no more SMs than the GPU has, more with more
// compute slices, never more memory than the GPU reports, and the whole-GPU profile below the
// GPU itself (MIG mode keeps some of both: A100's 7g has 98 of 108 SMs).
TEST(MigProfiles, SmsAndMemoryAreLgipsWithinTheGpu) {
  const auto& catalog = gf::test::catalog();
  const auto& eff = work::ComputeEfficiency::builtin();
  for (const std::string& gpu : mig_gpus()) {
    const auto& spec = catalog.gpu(gpu);
    const int gpu_sms = eff.sm_count(spec);
    const MigTable* table = mig_table(gpu);
    ASSERT_NE(table, nullptr);
    int last_slices = 0;
    int last_sms = 0;
    for (const auto& slots : table->profiles) {
      const work::MigProfile p = work::mig_profile(spec, slots.name);
      EXPECT_GT(p.sms, 0) << gpu << " " << p.name;
      if (gpu_sms > 0) {
        EXPECT_LE(p.sms, gpu_sms) << gpu << " " << p.name;
      }
      EXPECT_LT(p.memory_bytes, spec.memory.value()) << gpu << " " << p.name;
      if (slots.compute_slices > last_slices) {
        EXPECT_GT(p.sms, last_sms) << gpu << " " << p.name;
      }
      last_slices = slots.compute_slices;
      last_sms = p.sms;
    }
  }
  const auto& a100 = catalog.gpu("a100-sxm4-80gb");
  EXPECT_EQ(work::mig_profile(a100, "7g.80gb").sms, 98);
}
