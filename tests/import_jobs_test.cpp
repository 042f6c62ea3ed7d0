// The job and node importers (issue 36, item 5): Slurm sacct --parsable2, kubectl pod lists and
// kubectl node lists, on the public samples in tests/data/import/jobs/ (README there) and on inline
// inputs that reach each rule and each refusal.
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "probe/catalog_match.hpp"
#include "sched/csv_table.hpp"
#include "sched/import/iso_time.hpp"
#include "sched/import/k8s_nodes.hpp"
#include "sched/import/k8s_pods_trace.hpp"
#include "sched/import/k8s_quantity.hpp"
#include "sched/import/sacct_trace.hpp"
#include "sched/import/slurm_tres.hpp"
#include "sched/import/trace_writer.hpp"
#include "sched/trace_reader.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"

namespace gf::sched {
namespace {

std::string sample(const std::string& name) {
  std::ifstream in(std::string(GPUFABRIC_TEST_DATA) + "/import/jobs/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

long gpus_of(const std::vector<Job>& jobs) {
  return std::accumulate(jobs.begin(), jobs.end(), 0L,
                         [](long a, const Job& j) { return a + static_cast<long>(j.pods) * j.pod.gpus; });
}

// What `schedule --trace` reads back from the written trace: the same jobs.
void expect_schedule_reads(const ImportedTrace& t) {
  const Trace back = parse_trace(parse_csv(trace_csv(t.jobs), "written.csv"), false);
  ASSERT_EQ(back.jobs.size(), t.jobs.size());
  EXPECT_EQ(back.format, "gpufabric");
  EXPECT_TRUE(back.timed);
  for (std::size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_EQ(back.jobs[i].name, t.jobs[i].name);
    EXPECT_DOUBLE_EQ(back.jobs[i].submit, t.jobs[i].submit);
    EXPECT_DOUBLE_EQ(back.jobs[i].duration, t.jobs[i].duration);
    EXPECT_EQ(back.jobs[i].pod.gpus, t.jobs[i].pod.gpus);
    EXPECT_EQ(back.jobs[i].pod.mig, t.jobs[i].pod.mig);
    EXPECT_EQ(back.jobs[i].pods, t.jobs[i].pods);
  }
}

const Job& job(const ImportedTrace& t, const std::string& name) {
  for (const auto& j : t.jobs)
    if (j.name == name) return j;
  ADD_FAILURE() << "no job " << name;
  return t.jobs.front();
}

const std::string kHeader = "JobID|JobName|Submit|Start|End|Elapsed|State|AllocTRES|ReqTRES|NNodes|QOS\n";

TEST(IsoTime, ReadsSacctAndRfc3339Stamps) {
  EXPECT_DOUBLE_EQ(*iso_seconds("1970-01-02T00:00:00"), 86400);
  EXPECT_DOUBLE_EQ(*iso_seconds("2024-11-13T13:02:56") - *iso_seconds("2024-11-13T12:37:07"), 1549);
  EXPECT_DOUBLE_EQ(*iso_seconds("2024-03-01T00:00:00Z") - *iso_seconds("2024-02-28T00:00:00Z"), 2 * 86400);  // leap
  EXPECT_DOUBLE_EQ(*iso_seconds("2025-03-19T22:40:47+02:00"), *iso_seconds("2025-03-19T20:40:47Z"));
  EXPECT_DOUBLE_EQ(*iso_seconds("2025-03-19T20:40:47.5Z") - *iso_seconds("2025-03-19T20:40:47Z"), 0.5);
  for (const char* bad :
       {"Unknown", "2024-13-01T00:00:00", "2023-02-29T00:00:00", "2024-11-13 13:02", "2024-11-13T13:02:56Q"})
    EXPECT_FALSE(iso_seconds(bad)) << bad;
}

TEST(K8sQuantity, SiBinaryAndMilliSuffixes) {
  EXPECT_DOUBLE_EQ(*k8s_quantity("1900m"), 1.9);
  EXPECT_DOUBLE_EQ(*k8s_quantity("16367668Ki"), 16367668.0 * 1024);
  EXPECT_DOUBLE_EQ(*k8s_quantity("64G"), 64e9);
  EXPECT_DOUBLE_EQ(*k8s_quantity("1.5Gi"), 1.5 * 1073741824);
  EXPECT_DOUBLE_EQ(*k8s_quantity("1e3"), 1000);
  for (const char* bad : {"", "-1", "12Q", "Gi", "1.5 Gi"}) EXPECT_FALSE(k8s_quantity(bad)) << bad;
}

TEST(SlurmTres, UntypedTotalWinsOverTypedCounts) {
  const auto r = parse_tres("billing=19,cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=32G,node=1", {}, "AllocTRES");
  EXPECT_EQ(r.gpus, 1);  // not 2: the typed count is part of the total
  EXPECT_EQ(r.gpu_type, "a100");
  EXPECT_EQ(r.cpus, 1);
  EXPECT_EQ(r.memory_mib, 32768);
  EXPECT_EQ(parse_tres("cpu=8,gres/gpu:a100=2,gres/gpu:v100=2,mem=62.50G", {}, "AllocTRES").gpus, 4);
  EXPECT_EQ(parse_tres("cpu=8,gres/gpu:a100=2,gres/gpu:v100=2", {}, "AllocTRES").gpu_type, "");
  EXPECT_EQ(parse_tres("cpu=8,mem=62.50G", {}, "AllocTRES").memory_mib, 64000);
  EXPECT_EQ(parse_gres("gpu:4", {}, "AllocGRES").gpus, 4);
  EXPECT_EQ(parse_gres("gpu:tesla:2(IDX:0-1)", {}, "AllocGRES").gpus, 2);
  EXPECT_EQ(parse_gres("nvme:720,gpu:a100:2", {}, "ReqGRES").gpu_type, "a100");
  EXPECT_EQ(parse_gres("(null)", {}, "AllocGRES").gpus, 0);
  for (const char* bad : {"cpu=8,gres/gpu", "gres/gpu=two", "mem=lots", "gres/gpu=-1", "=4"})
    EXPECT_EQ(test::thrown_input_error([&] {
                (void)parse_tres(bad, {"f", 3, 0}, "AllocTRES");
              }).field(),
              "AllocTRES")
        << bad;
}

TEST(SacctImport, FoxSampleKeepsTheGpuJobsThatRan) {
  const auto t = import_sacct(sample("sacct_fox_uio.txt"), "fox");
  EXPECT_EQ(t.report.records, 29);  // allocations, steps not counted
  EXPECT_EQ(t.report.skipped.at("job steps (folded into their job)"), 67);
  EXPECT_EQ(t.report.skipped.at("jobs without GPUs"), 13);
  ASSERT_EQ(t.jobs.size(), 16u);
  EXPECT_EQ(gpus_of(t.jobs), 16);
  EXPECT_EQ(t.report.time_origin, "2024-11-13T12:37:07");
  const Job& first = t.jobs.front();
  EXPECT_EQ(first.name, "974724");
  EXPECT_DOUBLE_EQ(first.submit, 0);
  EXPECT_DOUBLE_EQ(first.duration, 234);  // ElapsedRaw
  EXPECT_DOUBLE_EQ(first.recorded_queue, 25 * 60 + 49);
  EXPECT_EQ(first.pod.cpu_milli, 8000);
  EXPECT_EQ(first.pod.memory_mib, 65536);
  // Cancelled after it started: it ran, and is kept for as long as it ran.
  EXPECT_DOUBLE_EQ(job(t, "974745").duration, 1389);
  // gres/gpu:a100=1 beside gres/gpu=1 is one GPU.
  EXPECT_EQ(job(t, "974804").pod.gpus, 1);
  expect_schedule_reads(t);
}

TEST(SacctImport, XdmodSamplesInTheirOwnColumnOrder) {
  const auto t = import_sacct(sample("sacct_xdmod_phillips.txt"), "phillips");
  EXPECT_EQ(t.report.records, 41);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(gpus_of(t.jobs), 4);
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, ((10 * 24 + 13) * 60 + 27) * 60 + 6);  // Elapsed 10-13:27:06
  EXPECT_EQ(t.jobs[0].qos, "chestnut");
  EXPECT_DOUBLE_EQ(t.jobs[1].duration, 17);
  expect_schedule_reads(t);
  const auto a = import_sacct(sample("sacct_xdmod_accounting_logs.txt"), "accounting");
  EXPECT_EQ(a.report.records, 4);
  ASSERT_EQ(a.jobs.size(), 1u);
  EXPECT_EQ(a.jobs[0].pod.gpus, 2);
  EXPECT_EQ(a.jobs[0].pod.cpu_milli, 0);  // the TRES names no cpu
  expect_schedule_reads(a);
}

TEST(SacctImport, StepsStatesNodesAndGres) {
  const std::string text =
      "State|Elapsed|AllocGRES|NNodes|Start|JobID|Submit\n"
      "COMPLETED|1-02:03:04|gpu:8|2|2025-01-01T00:10:00|100|2025-01-01T00:00:00\n"
      "COMPLETED|01:00:00|gpu:8|2|2025-01-01T00:10:00|100.batch|2025-01-01T00:00:00\n"
      "PENDING|00:00:00|gpu:4|1|Unknown|101|2025-01-01T00:05:00\n"
      "CANCELLED by 7|00:00:00|gpu:4|1|None|102|2025-01-01T00:06:00\n"
      "RUNNING|00:30:00|gpu:1|1|2025-01-01T00:07:00|103|2025-01-01T00:07:00\n"
      "FAILED|00:00:30|gpu:3|2|2025-01-01T00:20:00|104_7|2025-01-01T00:20:00\n";
  const auto t = import_sacct(text, "inline");
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].pods, 2);
  EXPECT_EQ(t.jobs[0].pod.gpus, 4);  // 8 GPUs over 2 nodes
  EXPECT_DOUBLE_EQ(t.jobs[0].duration, 93784);
  EXPECT_EQ(t.jobs[1].name, "104_7");
  EXPECT_DOUBLE_EQ(t.jobs[1].submit, 1200);
  EXPECT_EQ(t.jobs[1].pod.gpus, 2);  // 3 over 2 nodes, rounded up, and said so
  ASSERT_EQ(t.report.warnings.size(), 1u);
  EXPECT_EQ(t.report.skipped.at("GPU jobs that never started (PENDING, or cancelled while pending)"), 2);
  EXPECT_EQ(t.report.skipped.at("GPU jobs still running (no duration yet)"), 1);
  EXPECT_EQ(t.report.skipped.at("job steps (folded into their job)"), 1);
  expect_schedule_reads(t);
}

TEST(SacctImport, BadInputNamesTheLineAndTheColumn) {
  const auto missing =
      test::thrown_input_error([] { (void)import_sacct("JobID|Start|State|AllocTRES|Elapsed\n1|x|y|z|w\n", "f"); });
  EXPECT_EQ(missing.field(), "Submit");
  EXPECT_EQ(missing.where().line, 1);
  EXPECT_NE(missing.valid().find(kSacctCommand), std::string::npos);
  const std::string good =
      "1|a|2025-01-01T00:00:00|2025-01-01T00:01:00|2025-01-01T00:02:00|00:01:00|COMPLETED|gres/gpu=1||1|normal\n";
  const auto time = test::thrown_input_error([&] {
    (void)import_sacct(kHeader + good + "2|a|2025-13-01T00:00:00|2025-01-01T00:01:00|||COMPLETED|gres/gpu=1||1|\n",
                       "f");
  });
  EXPECT_EQ(time.field(), "Submit");
  EXPECT_EQ(time.where().line, 3);
  const auto tres = test::thrown_input_error([&] {
    (void)import_sacct(
        kHeader + "2|a|2025-01-01T00:00:00|2025-01-01T00:01:00||00:01:00|COMPLETED|cpu=2,gres/gpu=x||1|\n", "f");
  });
  EXPECT_EQ(tres.field(), "AllocTRES");
  EXPECT_EQ(tres.where().line, 2);
  const auto elapsed = test::thrown_input_error([&] {
    (void)import_sacct(kHeader + "2|a|2025-01-01T00:00:00|2025-01-01T00:01:00||1:99:00|COMPLETED|gres/gpu=1||1|\n",
                       "f");
  });
  EXPECT_EQ(elapsed.field(), "Elapsed");
  EXPECT_EQ(test::thrown_input_error([&] { (void)import_sacct(kHeader + "2|a|b\n", "f"); }).field(), "row");
  EXPECT_EQ(test::thrown_input_error([&] { (void)import_sacct(good, "f"); }).field(), "header");  // sacct --noheader
  EXPECT_EQ(test::thrown_input_error([&] {
              (void)import_sacct(kHeader + "2|a|2025-01-01T00:00:00|Unknown||00:00:00|PENDING|gres/gpu=1||1|\n", "f");
            }).field(),
            "rows");
  EXPECT_EQ(test::thrown_input_error([&] { (void)import_sacct(std::string("JobID|Submit\n1|\0\n", 16), "f"); }).field(),
            "row");
}

TEST(SacctImport, RepeatedIdsAndOversizedJobs) {
  const std::string row = "|a|2025-01-01T00:00:00|2025-01-01T00:01:00||00:01:00|COMPLETED|gres/gpu=1||1|\n";
  // sacct -D: one ID per run; a later run is renamed, never onto an ID the file has.
  const auto t = import_sacct(kHeader + "7" + row + "7" + row + "7#2" + row, "f");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].name, "7");
  EXPECT_EQ(t.jobs[1].name, "7#3");
  EXPECT_EQ(t.jobs[2].name, "7#2");
  expect_schedule_reads(t);
  const auto cpus = test::thrown_input_error([&] {
    (void)import_sacct(
        kHeader + "8|a|2025-01-01T00:00:00|2025-01-01T00:01:00||00:01:00|COMPLETED|cpu=999999999,gres/gpu=1||1|\n",
        "f");
  });
  EXPECT_EQ(cpus.field(), "AllocTRES");
  const auto span = test::thrown_input_error([&] {
    (void)import_sacct(
        kHeader + "8" + row + "9|a|9999-01-01T00:00:00|9999-01-01T00:01:00||00:01:00|COMPLETED|gres/gpu=1||1|\n", "f");
  });
  EXPECT_EQ(span.field(), "Submit");
  EXPECT_EQ(span.where().line, 3);
}

TEST(K8sPodsImport, SyntheticSampleKeepsTheGpuPodsThatRan) {
  const auto t = import_k8s_pods(sample("k8s_pods_synthetic.json"), "pods");
  EXPECT_EQ(t.report.records, 7);
  EXPECT_EQ(t.report.skipped.at("pods without GPU requests"), 1);
  EXPECT_EQ(t.report.skipped.at("GPU pods that never started (Pending)"), 1);
  EXPECT_EQ(t.report.skipped.at("GPU pods still running (no finishedAt yet)"), 1);
  ASSERT_EQ(t.jobs.size(), 4u);
  EXPECT_EQ(gpus_of(t.jobs), 10);
  EXPECT_EQ(t.report.time_origin, "2025-06-02T09:00:00Z");
  const Job& train = job(t, "train/llama-sft-worker-0");
  EXPECT_EQ(train.pod.gpus, 8);
  EXPECT_DOUBLE_EQ(train.duration, 4 * 3600 + 10 * 60 + 35);  // startTime to finishedAt
  EXPECT_EQ(train.qos, "Guaranteed");
  // A 16-CPU init container outweighs the 8.25 CPUs its containers ask for together.
  const Job& eval = job(t, "train/eval-job-x7k2p");
  EXPECT_EQ(eval.pod.cpu_milli, 16000);
  EXPECT_EQ(eval.pod.memory_mib, 64 * 1024 + 256);
  EXPECT_DOUBLE_EQ(eval.submit, 300);
  EXPECT_EQ(job(t, "inference/notebook-mig-abc12").pod.mig, "1g.10gb");
  EXPECT_EQ(job(t, "batch/render-besteffort-q2").qos, "BE");
  expect_schedule_reads(t);
}

TEST(K8sPodsImport, BadInputNamesTheLineAndTheField) {
  const auto syntax =
      test::thrown_input_error([] { (void)import_k8s_pods("{\n  \"kind\": \"List\",\n  \"items\": [,]\n}\n", "p"); });
  EXPECT_EQ(syntax.where().line, 3);
  EXPECT_EQ(test::thrown_input_error([] { (void)import_k8s_pods(R"({"kind": "Pod", "metadata": {}})", "p"); }).field(),
            "kind");
  EXPECT_EQ(test::thrown_input_error([] { (void)import_k8s_pods(R"([1, 2])", "p"); }).field(), "kind");
  EXPECT_EQ(test::thrown_input_error([] { (void)import_k8s_pods(R"({"kind": "List", "items": {}})", "p"); }).field(),
            "items");
  const std::string pod_list =
      "{\"kind\": \"List\", \"items\": [\n"
      "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\", \"creationTimestamp\": \"2025-01-01T00:00:00Z\"},\n"
      "   \"spec\": {\"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}]},\n"
      "   \"status\": {\"startTime\": \"2025-01-01T00:00:01Z\", \"containerStatuses\": [{\"state\": {\"terminated\": "
      "{\"finishedAt\": \"2025-01-01T00:01:01Z\"}}}]}},\n"
      "  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"b\", \"creationTimestamp\": \"yesterday\"},\n"
      "   \"spec\": {\"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"1\"}}}]},\n"
      "   \"status\": {\"startTime\": \"2025-01-01T00:00:01Z\", \"containerStatuses\": [{\"state\": {\"terminated\": "
      "{\"finishedAt\": \"2025-01-01T00:01:01Z\"}}}]}}\n"
      "]}\n";
  const auto stamp = test::thrown_input_error([&] { (void)import_k8s_pods(pod_list, "p"); });
  EXPECT_EQ(stamp.field(), "items[1].metadata.creationTimestamp");
  EXPECT_EQ(stamp.where().line, 5);
  std::string quantity = pod_list;
  quantity.replace(quantity.find("\"1\""), 3, "\"one\"");
  const auto q = test::thrown_input_error([&] { (void)import_k8s_pods(quantity, "p"); });
  EXPECT_EQ(q.field(), "items[0].spec.containers[0].resources.limits.nvidia.com/gpu");
  EXPECT_EQ(q.where().line, 2);
  std::string upper = pod_list;
  upper.replace(upper.find("\"name\": \"b\""), 11, "\"name\": \"B b\"");
  EXPECT_EQ(test::thrown_input_error([&] { (void)import_k8s_pods(upper, "p"); }).field(), "items[1].metadata.name");
  std::string node = pod_list;
  node.replace(node.find("\"Pod\""), 5, "\"Node\"");
  EXPECT_EQ(test::thrown_input_error([&] { (void)import_k8s_pods(node, "p"); }).field(), "items[0].kind");
}

std::string catalog_gpu(const std::string& product) { return probe::gpu_model_for_name(product); }

TEST(K8sNodesImport, SamplesBecomeANodeListScheduleReads) {
  const auto a16 = import_k8s_nodes(sample("k8s_nodes_edgexr_a16.json"), "a16", catalog_gpu);
  ASSERT_EQ(a16.nodes.size(), 1u);
  EXPECT_EQ(a16.nodes[0].name, "nori");
  EXPECT_EQ(a16.nodes[0].gpus.size(), 1u);
  EXPECT_EQ(a16.nodes[0].model, "NVIDIA-A16-4Q");  // a vGPU the catalog does not have: kept, and said so
  EXPECT_EQ(a16.nodes[0].cpu_milli, 2000);
  EXPECT_EQ(a16.nodes[0].memory_mib, 16367668 / 1024);
  ASSERT_EQ(a16.report.warnings.size(), 1u);
  EXPECT_NE(a16.report.warnings[0].find("NVIDIA-A16-4Q"), std::string::npos);

  const auto aks =
      test::thrown_input_error([] { (void)import_k8s_nodes(sample("k8s_nodes_edgexr_aks.json"), "aks", catalog_gpu); });
  EXPECT_NE(std::string(aks.what()).find("3 nodes without NVIDIA GPUs"), std::string::npos);

  const auto s = import_k8s_nodes(sample("k8s_nodes_synthetic.json"), "synthetic", catalog_gpu);
  EXPECT_EQ(s.report.records, 5);
  EXPECT_EQ(s.report.skipped.at("nodes without NVIDIA GPUs"), 1);
  ASSERT_EQ(s.nodes.size(), 4u);
  EXPECT_EQ(s.nodes[0].model, "h100-sxm5");
  EXPECT_EQ(s.nodes[0].gpus.size(), 8u);
  // 14 MIG 1g.10gb devices under the single strategy are 2 A100s (7 instances each).
  EXPECT_EQ(s.nodes[2].model, "a100-sxm4-80gb");
  EXPECT_EQ(s.nodes[2].gpus.size(), 2u);
  EXPECT_NE(s.nodes[2].mig_table, nullptr);
  EXPECT_EQ(s.nodes[2].cpu_milli, 63500);
  // Time-slicing advertises the one A10G four times; the count label says one.
  EXPECT_EQ(s.nodes[3].model, "NVIDIA-A10G");
  EXPECT_EQ(s.nodes[3].gpus.size(), 1u);

  std::vector<std::string> skipped;
  const auto back = parse_nodes(parse_csv(node_list_csv(s.nodes), "nodes.csv"), false, skipped);
  ASSERT_EQ(back.size(), s.nodes.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].name, s.nodes[i].name);
    EXPECT_EQ(back[i].gpus.size(), s.nodes[i].gpus.size());
    EXPECT_EQ(back[i].model, s.nodes[i].model);
  }
}

TEST(K8sNodesImport, DevicesOverReplicasWithoutACountLabel) {
  const std::string text = R"({"kind": "NodeList", "items": [
    {"metadata": {"name": "n", "labels": {"nvidia.com/gpu.product": "NVIDIA-L4", "nvidia.com/gpu.replicas": "4"}},
     "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "8"}}}]})";
  const auto r = import_k8s_nodes(text, "n", catalog_gpu);
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(r.nodes[0].gpus.size(), 2u);
  EXPECT_EQ(r.nodes[0].model, "l4");
  EXPECT_EQ(r.nodes[0].memory_mib, 32768);
  const auto bad = test::thrown_input_error([&] {
    std::string t = text;
    t.replace(t.find("\"32Gi\""), 6, "\"lots\"");
    (void)import_k8s_nodes(t, "n", catalog_gpu);
  });
  EXPECT_EQ(bad.field(), "items[0].status.allocatable.memory");
  EXPECT_EQ(bad.where().line, 2);
}

TEST(ImportCommand, WritesWhatScheduleReadsAndRefusesBadInput) {
  const test::ScratchDir dir;
  const std::string trace = dir.file("trace.csv"), nodes = dir.file("nodes.csv");
  const std::string data = std::string(GPUFABRIC_TEST_DATA) + "/import/jobs/";
  const auto s = test::run_cli({"import", "sacct", data + "sacct_fox_uio.txt", "-o", trace});
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.out.find("wrote " + trace + ": 16 GPU jobs (16 GPUs)"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("67 job steps"), std::string::npos) << s.out;
  const auto n = test::run_cli({"import", "k8s-nodes", data + "k8s_nodes_synthetic.json", "-o", nodes});
  ASSERT_EQ(n.code, 0) << n.err;
  const auto replay = test::run_cli({"schedule", "--trace", trace, "--nodes-file", nodes, "--policy", "first-fit"});
  EXPECT_EQ(replay.code, 0) << replay.err;
  EXPECT_NE(replay.out.find("16 jobs"), std::string::npos) << replay.out;
  const auto p = test::run_cli({"import", "k8s-pods", data + "k8s_pods_synthetic.json", "-o", trace});
  EXPECT_EQ(p.code, 0) << p.err;
  const auto bad = test::run_cli({"import", "k8s-pods", data + "sacct_fox_uio.txt", "-o", dir.file("x.csv")});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("sacct_fox_uio.txt:1"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.csv")));  // nothing written on failure
  // Without -o the trace goes to standard output, whole.
  const auto to_stdout = test::run_cli({"import", "sacct", data + "sacct_fox_uio.txt"});
  EXPECT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out.rfind("name,submit", 0), 0u) << to_stdout.out;
}

}  // namespace
}  // namespace gf::sched
