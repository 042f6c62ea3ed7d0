#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "data/files.hpp"
#include "test_support.hpp"
#include "work/pipeline.hpp"
#include "work/what_if.hpp"

using gf::test::catalog;
using gf::test::input_error;
using gf::test::preset;

namespace gf::work {
namespace {

topo::Topology from_file(const std::string& name) {
  return topo::Topology(topo::load_cluster_file(test::data_file(name), catalog()), catalog());
}

PipelineResult model(const topo::Topology& t, const std::string& workload, PipelineOptions o = {}) {
  return model_pipeline(t, catalog(), load_workload(workload), o);
}

TEST(Workloads, BuiltinsLoadAndCiteEveryFigure) {
  const auto names = builtin_workloads();
  for (const char* want : {"resnet50-imagenet", "llm-pretokenized", "video-decode", "dlrm-embeddings"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  for (const auto& f : data::files_under("data/workloads/")) {
    const auto w = parse_workload(std::string(f.text), std::string(f.path));
    EXPECT_GT(w.flops_per_sample, 0);
    const YAML::Node root = YAML::Load(std::string(f.text));
    for (const char* key : {"sample_bytes_on_disk", "decoded_bytes", "cpu_seconds_per_sample",
                            "cpu_memory_bytes_per_sample", "flops_per_sample", "peak_fraction", "batch_per_gpu"}) {
      EXPECT_TRUE(root[std::string(key) + "_source"]) << f.path << ": " << key << " has no _source";
    }
  }
}

TEST(Workloads, TypoInAKeyIsAnErrorWithItsLine) {
  const std::string text = "name: x\nsample_bytes_on_disk: 1\ndecoded_bytes: 1\ncpu_seconds_per_sampel: 1\n";
  const auto msg = input_error([&] { parse_workload(text, "w.yaml"); });
  EXPECT_NE(msg.find("w.yaml:4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'cpu_seconds_per_sample'"), std::string::npos) << msg;
}

TEST(Workloads, UnknownNameSuggestsABuiltin) {
  const auto msg = input_error([] { load_workload("resnet50-imagnet"); });
  EXPECT_NE(msg.find("did you mean 'resnet50-imagenet'"), std::string::npos) << msg;
}

// The brief's case 7: a DGX A100 training ResNet-50 from JPEGs with the recipe's CPU decode
// starves its GPUs; decoding on the GPUs moves the bottleneck to the GPUs themselves.
TEST(Pipeline, ResNetOnDgxA100IsCpuBoundAndGpuDecodeMovesTheBottleneck) {
  const auto t = preset("dgx-a100");
  const auto cpu = model(t, "resnet50-imagenet");
  EXPECT_EQ(cpu.bottleneck, "CPU decode");
  EXPECT_GT(cpu.gpu_idle, 0.2);
  ASSERT_NE(cpu.stage("CPU decode"), nullptr);
  EXPECT_NEAR(cpu.stage("CPU decode")->utilisation, 1.0, 1e-9);

  PipelineOptions o;
  o.decode = DecodeOn::gpu;
  const auto gpu = model(t, "resnet50-imagenet", o);
  EXPECT_EQ(gpu.bottleneck, "GPU compute");
  EXPECT_GT(gpu.samples_per_second, cpu.samples_per_second * 1.3);
  EXPECT_LT(gpu.gpu_idle, 1e-9);

  // The what-if sizes the CPU: the cores to feed the GPUs follow from the per-sample cost.
  const auto lines = what_ifs(t, catalog(), load_workload("resnet50-imagenet"), {}, cpu);
  const int need = cores_needed(load_workload("resnet50-imagenet"), {}, cpu.compute_capacity);
  bool found = false;
  for (const auto& l : lines) found = found || l.find("needs " + std::to_string(need) + " cores") != std::string::npos;
  EXPECT_TRUE(found) << "no line with 'needs " << need << " cores'";
  // With enough loader cores the same node is no longer CPU-bound.
  PipelineOptions wide;
  wide.loader_cores = need + 1;
  EXPECT_EQ(model(t, "resnet50-imagenet", wide).bottleneck, "GPU compute");
}

// Eight GPUs pulling H2D at once through two GPUs per PCIe switch uplink: each gets about half
// of what one GPU alone gets on its path.
TEST(Pipeline, GpusSharingASwitchUplinkSplitIt) {
  const auto t = preset("dgx-a100");
  const auto r = model(t, "resnet50-imagenet");
  const auto* h2d = r.stage("H2D copy");
  ASSERT_TRUE(h2d && h2d->alone);
  const double one_gpu = in_GBps(t.node().from_memory(t.node().socket_of(t.node().gpu(0)), t.node().gpu(0)).bandwidth);
  EXPECT_NEAR(in_GBps(*h2d->alone), one_gpu / 2, one_gpu * 0.02);
}

// Storage reads go up the switch uplink into host memory; with GPUDirect Storage the drives
// feed the GPUs peer-to-peer under the switch and the uplink is out of the way.
TEST(Pipeline, StorageBehindTheGpusSwitchAndGds) {
  const auto t = from_file("pipeline_shared_switch.yaml");
  PipelineOptions o;
  o.decode = DecodeOn::gpu;
  const auto host = model(t, "resnet50-imagenet", o);
  o.gds = true;
  const auto gds = model(t, "resnet50-imagenet", o);
  const auto* a = host.stage("storage read");
  const auto* b = gds.stage("storage read");
  ASSERT_TRUE(a && b);
  // Eight Gen4 drives exceed one Gen4 x16 uplink; without GDS the uplink caps them, with GDS
  // the two GPUs' own x16 links take them.
  const auto& up = t.graph().link(t.node().to_memory(t.node().gpu(0), 0).links.back());
  double uplink = 0;
  for (const auto l : t.node().to_memory(t.node().storage(0), 0).links) {
    const auto& link = t.graph().link(l);
    if (link.lanes == 16 && link.kind == topo::LinkKind::pcie) uplink = in_GBps(link.capacity);
  }
  (void)up;
  ASSERT_GT(uplink, 0);
  EXPECT_NEAR(a->capacity * 115440 / 1e9, uplink, uplink * 0.01);
  EXPECT_NEAR(b->capacity * 115440 / 1e9, 2 * uplink, uplink * 0.02);
  EXPECT_EQ(gds.stage("H2D copy"), nullptr);  // the read is the copy
}

TEST(Pipeline, LoadedNeverBeatsAloneAndDramIsShared) {
  const auto t = from_file("pipeline_shared_switch.yaml");
  PipelineOptions o;
  o.source = DataSource::page_cache;
  o.loader_cores = 60;
  const auto r = model(t, "resnet50-imagenet", o);
  for (const auto& s : r.stages) EXPECT_LE(s.loaded, s.capacity * (1 + 1e-9)) << s.name;
  // Page-cache reads, decode traffic and H2D all use the one socket's DRAM.
  EXPECT_LT(r.stage("storage read")->loaded, r.stage("storage read")->capacity);
}

TEST(Pipeline, PageableIsSlowerAndDoesNotOverlapCompute) {
  const auto t = preset("dgx-a100");
  PipelineOptions o;
  o.decode = DecodeOn::gpu;
  const auto pinned = model(t, "resnet50-imagenet", o);
  o.buffers = HostBuffers::pageable;
  const auto pageable = model(t, "resnet50-imagenet", o);
  // Pageable copies reach the catalog's fraction of one GPU's pinned path (0.39 on DGX A100's
  // own bandwidthTest), below the half of the shared uplink that pinned copies get.
  const double one_gpu = in_GBps(t.node().from_memory(t.node().socket_of(t.node().gpu(0)), t.node().gpu(0)).bandwidth);
  EXPECT_NEAR(in_GBps(*pageable.stage("H2D copy")->alone), one_gpu * catalog().pageable_copy().efficiency, 0.05);
  EXPECT_LT(in_GBps(*pageable.stage("H2D copy")->alone), in_GBps(*pinned.stage("H2D copy")->alone));
  EXPECT_LT(pageable.samples_per_second, pinned.samples_per_second);
}

TEST(Pipeline, WithoutPrefetchTheStagesAddUp) {
  const auto t = preset("dgx-a100");
  PipelineOptions o;
  o.prefetch = 0;
  const auto serial = model(t, "resnet50-imagenet", o);
  const auto overlapped = model(t, "resnet50-imagenet");
  EXPECT_LT(serial.samples_per_second, overlapped.samples_per_second);
  double sum = 0;
  for (const auto& s : serial.stages) sum += 1.0 / s.capacity;
  EXPECT_NEAR(serial.samples_per_second, 1.0 / sum, 1e-6 * serial.samples_per_second);
}

TEST(Pipeline, ImpossibleOptionsAreInputErrors) {
  const auto t = preset("dgx-a100");
  PipelineOptions gds_cpu;
  gds_cpu.gds = true;
  EXPECT_NE(input_error([&] { model(t, "resnet50-imagenet", gds_cpu); }).find("--decode gpu"), std::string::npos);
  PipelineOptions no_gpu_decode;
  no_gpu_decode.decode = DecodeOn::gpu;
  EXPECT_NE(input_error([&] { model(t, "video-decode", no_gpu_decode); }).find("no GPU decode"), std::string::npos);
  PipelineOptions not_fs;
  not_fs.source = DataSource::network_fs;
  not_fs.network_fs = "nvme-gen4";
  EXPECT_NE(input_error([&] { model(t, "resnet50-imagenet", not_fs); }).find("not a network file system"),
            std::string::npos);
  PipelineOptions nvme;
  EXPECT_NE(input_error([&] { model(from_file("small_pcie.yaml"), "resnet50-imagenet", nvme); }).find("storage"),
            std::string::npos);
}

int cli(std::vector<std::string> args, std::string& out, std::string& err) {
  const auto r = test::run_cli(std::move(args));
  out = r.out;
  err = r.err;
  return r.code;
}

TEST(PipelineCli, TableNamesTheStarvingStageAndJsonCarriesIt) {
  std::string out, err;
  ASSERT_EQ(cli({"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet"}, out, err), 0) << err;
  EXPECT_NE(out.find("bottleneck     CPU decode"), std::string::npos) << out;
  EXPECT_NE(out.find("starved for input"), std::string::npos) << out;
  EXPECT_NE(out.find("What if:"), std::string::npos) << out;
  ASSERT_EQ(cli({"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet", "--format", "json"}, out, err), 0);
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["bottleneck"], "CPU decode");
  EXPECT_GT(j["gpu_idle_fraction"].get<double>(), 0.2);
  for (const auto& st : j["stages"]) {
    for (const char* key : {"stage", "resource", "capacity_samples_per_s", "loaded_samples_per_s", "utilisation"}) {
      EXPECT_TRUE(st.contains(key)) << key;
    }
  }
}

TEST(PipelineCli, BadOptionsExitTwoWithOneMessage) {
  std::string out, err;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet", "--source", "tape"},
           {"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet", "--prefetch", "-1"},
           {"pipeline", "--preset", "dgx-a100", "--input", "resnet"},
           {"pipeline", "--preset", "dgx-a100"},
           {"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet", "--loader-cores", "999"}}) {
    EXPECT_EQ(cli(args, out, err), 2) << args.back();
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(err.find("gpufabric: error"), err.rfind("gpufabric: error")) << err;
  }
}

}  // namespace
}  // namespace gf::work
