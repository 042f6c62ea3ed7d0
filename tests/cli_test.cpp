#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "cli/commands.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"

namespace gf {
namespace {

using test::CliResult;

CliResult run(std::vector<std::string> args) { return test::run_cli(std::move(args)); }

void expect_bad_input(const CliResult& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << "no partial output on error";
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  // One message: a single error line.
  EXPECT_EQ(r.err.find("gpufabric: error"), r.err.rfind("gpufabric: error")) << r.err;
}

TEST(Cli, TopoTableLooksLikeNvidiaSmi) {
  const auto r = run({"topo", "--preset", "dgx-h100"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU0  X     NV18"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NUMA Affinity"), std::string::npos);
  EXPECT_NE(r.out.find("Legend:"), std::string::npos);
  EXPECT_NE(r.out.find("GPU <-> NIC"), std::string::npos);
}

TEST(Cli, TopoJsonHasPairsWithTheDocumentedFields) {
  const auto r = run({"topo", "--preset", "pcie-4x-rtx4090", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pairs"].size(), 12u);  // 4 x 3 ordered pairs
  for (const auto& p : j["pairs"]) {
    for (const char* key : {"src", "dst", "type", "bandwidth_GBps", "latency_us", "transport"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    EXPECT_EQ(p["transport"], "host-staged");
    EXPECT_GT(p["bandwidth_GBps"].get<double>(), 0.0);
  }
  EXPECT_EQ(j["pairs_scope"], "all");
}

TEST(Cli, LargeClusterJsonStaysSmall) {
  const auto r = run(
      {"topo", "--preset", "dgx-h100", "--nodes", "2048", "--fabric", "fat-tree", "--tiers", "3", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pairs_scope"], "node0+examples");
  EXPECT_LT(j["pairs"].size(), 100u);
  EXPECT_EQ(j["summary"]["gpus"], 16384);
  EXPECT_LT(r.out.size(), 200000u);
}

TEST(Cli, MultiNodeTextSummarises) {
  const auto r = run({"topo", "--preset", "dgx-h100", "--nodes", "256", "--fabric", "fat-tree", "--tiers", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Across nodes"), std::string::npos);
  EXPECT_NE(r.out.find("network bisection"), std::string::npos);
  EXPECT_LT(r.out.size(), 20000u);  // node 0's matrix and summaries, not 2048 x 2048
}

TEST(Cli, DotIsGraphviz) {
  const auto r = run({"topo", "--preset", "dgx-a100", "--dot"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("graph \"dgx-a100\" {", 0), 0u);
  EXPECT_NE(r.out.find("nvlink"), std::string::npos);
}

TEST(Cli, PresetsListsAll) {
  const auto r = run({"presets"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* p : {"dgx1-v100", "dgx-a100", "dgx-h100", "hgx-h200", "dgx-b200", "hgx-h100-4gpu", "pcie-8x-h100",
                        "pcie-8x-a100", "pcie-8x-l40s", "pcie-4x-rtx4090", "pcie-2x-rtx2080ti", "aws-p4d", "aws-p5"}) {
    EXPECT_NE(r.out.find(p), std::string::npos) << p;
  }
}

TEST(Cli, CatalogListsSources) {
  const auto r = run({"catalog"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("h100-sxm5"), std::string::npos);
  EXPECT_NE(r.out.find("ib-ndr"), std::string::npos);
}

TEST(CliErrors, BadInputsExitTwoWithOneMessage) {
  expect_bad_input(run({"topo", "--preset", "dgx-h1000"}), "did you mean 'dgx-h100'");
  expect_bad_input(run({"topo"}), "--preset");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nodes", "0"}), "--nodes");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nodes", "eight"}), "--nodes");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--network", "eth-5g"}), "unknown network technology");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--fabric", "torus"}), "single, fat-tree, rail");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--tiers", "4"}), "--tiers");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--oversubscription", "0.5"}), "--oversubscription");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--p2p", "maybe"}), "on, off");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--format", "xml"}), "--format");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nodes", "200", "--fabric", "single"}),
                   "field '--fabric': a single quantum-2 switch has 64 ports");
  expect_bad_input(run({"topo", "nosuch-preset"}), "neither a preset nor a file");
  expect_bad_input(run({"topo", "dgx-h1000"}), "did you mean 'dgx-h100'");
  expect_bad_input(run({"topo", "dgx-h100", "--preset", "dgx-a100"}), "stray argument 'dgx-h100'");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nodes", "20000"}), "at most 100000 GPUs");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nodes", "200", "--fabric", "fat-tree", "--dot"}),
                   "too many to draw");
  expect_bad_input(run({"topo", "--cluster", gf::test::data_file("pcie_cycle.yaml")}), "cycle");
  // A switch whose parent's parent is missing (found by fuzz_cluster): named, not a crash.
  expect_bad_input(run({"topo", "--cluster", gf::test::data_file("pcie_missing_grandparent.yaml")}),
                   "parent 'a' is not a PCIe switch or socket");
  expect_bad_input(run({"topo", "--cluster", gf::test::data_file("bad_syntax.yaml")}), "bad_syntax.yaml:");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--catalog", gf::test::data_file("catalog_zero_bw")}),
                   "greater than zero");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nic", "connectx-9"}), "--nic");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--nic", "efa-v1"}), "cannot run network 'ib-ndr'");
  expect_bad_input(run({"topo", "--preset", "dgx-h100", "--bogus"}), "--bogus");
  expect_bad_input(run({"topo", "--bogus"}), "--bogus");
  expect_bad_input(run({"frobnicate"}), "unknown subcommand 'frobnicate'");
}

TEST(Cli, ClusterAsThePositionalArgumentTheSynopsisShows) {
  // `gpufabric topo CLUSTER`: a preset name or a cluster file.
  const auto by_flag = run({"topo", "--preset", "dgx-h100"});
  const auto by_name = run({"topo", "dgx-h100"});
  ASSERT_EQ(by_name.code, 0) << by_name.err;
  EXPECT_EQ(by_name.out, by_flag.out);
  const auto by_file = run({"topo", gf::test::data_file("small_pcie.yaml")});
  ASSERT_EQ(by_file.code, 0) << by_file.err;
  EXPECT_NE(by_file.out.find("test-pcie"), std::string::npos) << by_file.out;
  const auto coll = run({"collective", "all_reduce", "dgx-h100", "-b", "1M", "-e", "1M"});
  ASSERT_EQ(coll.code, 0) << coll.err;
  EXPECT_EQ(coll.out, run({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "1M", "-e", "1M"}).out);
}

TEST(Cli, TopoHeaderStatesOverrideRulesAndWarnings) {
  const auto r = run({"topo", "dgx-h100", "--nodes", "16", "--network", "eth-1g"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto header = r.out.substr(0, r.out.find("\n\n"));
  EXPECT_NE(header.find("note: --network eth-1g keeps the design's 8 NICs per node"), std::string::npos) << r.out;
  EXPECT_NE(header.find("warning: --network eth-1g: NIC connectx-7"), std::string::npos) << r.out;
  EXPECT_NE(header.find("note: fabric: 2-tier non-blocking fat-tree"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(run({"topo", "dgx-h100", "--nodes", "16", "--format", "json"}).out);
  ASSERT_TRUE(j.contains("notes"));
  EXPECT_NE(j["notes"][0].get<std::string>().find("fat-tree"), std::string::npos);
  // No override, one node: nothing to note.
  EXPECT_EQ(run({"topo", "dgx-h100"}).out.find("note:"), std::string::npos);
}

TEST(CliErrors, TheBinaryExitsWithCodeTwo) {
  const std::string cmd = std::string(GPUFABRIC_BIN) + " topo --preset nope >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_NE(status, -1);
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

TEST(CliCollective, LooksLikeNcclTests) {
  const auto r = run({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "8", "-e", "8G", "-f", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("#        size        count      type   redop   root       time    algbw    busbw"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# Avg bus bandwidth"), std::string::npos);
  // 8 B to 8 GiB by factor 2: 31 rows.
  std::size_t rows = 0;
  for (std::size_t p = r.out.find("\n "); p != std::string::npos; p = r.out.find("\n ", p + 1)) ++rows;
  EXPECT_EQ(rows, 31u);
}

TEST(CliCollective, JsonAndCsvRows) {
  const auto j =
      run({"collective", "all_gather", "--preset", "dgx-a100", "-b", "1M", "-e", "64M", "-f", "4", "--format", "json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["rows"].size(), 4u);
  for (const auto& row : doc["rows"]) {
    for (const char* key : {"size_bytes", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol"}) {
      EXPECT_TRUE(row.contains(key)) << key;
    }
  }
  const auto c = run({"collective", "alltoall", "--preset", "dgx-h100", "-b", "1M", "-e", "1M", "--format", "csv"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out.rfind("size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algorithm,protocol", 0), 0u);
}

TEST(CliCollective, ForcedAlgorithmsAndWarnings) {
  const auto r = run({"collective", "all_gather", "--preset", "dgx-h100", "-b", "1M", "-e", "1M", "--algo", "tree"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("]: NCCL_ALGO=Tree cannot run all_gather"), std::string::npos) << r.out;
  const auto ring = run({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "1G", "-e", "1G", "--algo", "Ring",
                         "--proto", "Simple", "--format", "csv"});
  ASSERT_EQ(ring.code, 0) << ring.err;
  EXPECT_NE(ring.out.find(",Ring,Simple,"), std::string::npos) << ring.out;
}

TEST(CliCollective, NicSwapAndItsProtocols) {
  // A slower NIC for every slot: two DGX H100 nodes with ConnectX-6 (200G) instead of
  // ConnectX-7 (400G) reach about half the ring busbw at 8 GiB.
  auto busbw = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"collective", "all_gather", "--preset", "dgx-h100", "--nodes",  "2",
                                     "-b",         "8G",         "-e",       "8G",       "--format", "csv"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    // Past the warnings and notes (comment lines) and the header: the first row.
    std::size_t header = 0;
    while (r.out.compare(header, 1, "#") == 0) header = r.out.find('\n', header) + 1;
    const auto row = r.out.substr(r.out.find('\n', header) + 1);
    std::vector<std::string> cells;
    std::size_t at = 0;
    for (std::size_t comma; (comma = row.find(',', at)) != std::string::npos; at = comma + 1)
      cells.push_back(row.substr(at, comma - at));
    return std::stod(cells.at(7));
  };
  const double cx7 = busbw({});
  const double cx6 = busbw({"--nic", "connectx-6", "--network", "ib-hdr"});
  EXPECT_NEAR(cx6 / cx7, 0.5, 0.08);
  // EFA v1's plugin forces NCCL_PROTO=simple across nodes: a forced LL says so.
  const auto ll =
      run({"collective", "all_reduce", "--preset", "aws-p4d", "--nodes", "2", "-b", "1K", "-e", "1K", "--proto", "LL"});
  ASSERT_EQ(ll.code, 0) << ll.err;
  EXPECT_NE(ll.out.find("sets NCCL_PROTO=simple"), std::string::npos) << ll.out;
}

TEST(CliCollective, BadInputExitsTwo) {
  expect_bad_input(run({"collective", "allreduce", "--preset", "dgx-h100"}), "did you mean 'all_reduce'");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "0"}), "-b");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-e", "2T"}), "more than 1 TiB");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "1G", "-e", "1M"}), "-b <= -e");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "8X"}), "64K");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-f", "1"}), "-f");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-d", "float128"}), "bfloat16");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "-o", "xor"}), "sum, prod");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "--gpus", "9"}), "cluster has 8 GPUs");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-a100", "--algo", "NVLS"}), "NVLink SHARP");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "--nodes", "2", "--network", "roce-400g",
                        "--algo", "CollNetDirect"}),
                   "SHARP");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "--algo", "Butterfly"}), "Ring, Tree");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "--proto", "LL64"}), "LL128");
  expect_bad_input(run({"collective", "all_reduce", "--preset", "dgx-h100", "--engine", "fast"}), "flow, analytic");
  expect_bad_input(run({"collective", "all_gather", "--preset", "dgx-h100", "-b", "8", "-e", "16"}),
                   "below one float element per rank");
}

TEST(Cli, ValidateReportsBothSuites) {
  const auto r = run({"validate"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Point-to-point paths"), std::string::npos);
  EXPECT_NE(r.out.find("Collectives: predicted vs nccl-tests"), std::string::npos);
  EXPECT_NE(r.out.find(">=64MiB"), std::string::npos);
  expect_bad_input(run({"validate", "--suite", "everything"}), "paths, collectives");
}

TEST(Cli, OutputIsDeterministic) {
  const auto a = run({"topo", "--preset", "dgx-h100", "--nodes", "64", "--fabric", "fat-tree", "--format", "json"});
  const auto b = run({"topo", "--preset", "dgx-h100", "--nodes", "64", "--fabric", "fat-tree", "--format", "json"});
  EXPECT_EQ(a.out, b.out);
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

TEST(CliTransports, TopoAndCollectiveNameNcclsTransports) {
  const auto topo = gf::test::run_cli({"topo", "pcie-8x-h100"});
  ASSERT_EQ(topo.code, 0) << topo.err;
  EXPECT_NE(topo.out.find("GPU0 -> GPU1 (PIX): P2P/CUMEM"), std::string::npos);
  EXPECT_NE(topo.out.find("GPU0 -> GPU4 (SYS): SHM/direct/direct"), std::string::npos);
  // NCCL_P2P_LEVEL=SYS opens P2P across the sockets, and the header says the variable was set.
  const auto sys = gf::test::run_cli(
      {"collective", "all_reduce", "pcie-8x-h100", "-b", "1G", "-e", "1G", "--env", "NCCL_P2P_LEVEL=SYS"});
  ASSERT_EQ(sys.code, 0) << sys.err;
  EXPECT_NE(sys.out.find("env: NCCL_P2P_LEVEL=SYS"), std::string::npos) << sys.out;
  EXPECT_EQ(sys.out.find("SHM"), std::string::npos) << sys.out;
  const auto bad = gf::test::run_cli({"collective", "all_reduce", "dgx-h100", "--env", "NCCL_P2P_LEVEL=NEAR"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--env"), std::string::npos) << bad.err;
  const auto one = gf::test::run_cli({"collective", "all_reduce", "dgx-h100", "--gpus", "1"});
  EXPECT_EQ(one.code, 2);
  EXPECT_NE(one.err.find("one rank"), std::string::npos) << one.err;
  const auto fp8 = gf::test::run_cli({"collective", "all_reduce", "dgx-a100", "-d", "f8e4m3"});
  EXPECT_EQ(fp8.code, 2);
  EXPECT_NE(fp8.err.find("sm90"), std::string::npos) << fp8.err;
}

TEST(CliCalibrate, FitsALogAndTheOverlayRunsACollective) {
  const gf::test::ScratchDir dir;
  const std::string overlay = dir.file("cal.yaml");
  // A log made by the model itself, with 20% slower NVLink than the catalog's.
  const std::string truth = dir.write(
      "truth.yaml", "nvlink_generation: 3\nparameters:\n  nvlink_efficiency: {catalog: 0.78, fitted: 0.62}\n");
  const auto made = gf::test::run_cli(
      {"collective", "all_gather", "dgx-a100", "-b", "1M", "-e", "1G", "-f", "8", "--calibration", truth});
  ASSERT_EQ(made.code, 0) << made.err;
  const std::string log = dir.write("ar.log", made.out);
  const auto fit = gf::test::run_cli({"calibrate", "dgx-a100", "--log", log + ":all_gather", "-o", overlay});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_NE(fit.out.find("nvlink_efficiency"), std::string::npos) << fit.out;
  const auto used = gf::test::run_cli(
      {"collective", "all_gather", "dgx-a100", "-b", "1G", "-e", "1G", "--calibration", overlay, "--format", "json"});
  ASSERT_EQ(used.code, 0) << used.err;
  const auto again = gf::test::run_cli(
      {"collective", "all_gather", "dgx-a100", "-b", "1G", "-e", "1G", "--calibration", truth, "--format", "json"});
  const auto busbw = [](const std::string& json) {
    return nlohmann::json::parse(json)["rows"][0]["busbw_GBps"].get<double>();
  };
  EXPECT_NEAR(busbw(used.out), busbw(again.out), busbw(again.out) * 0.01);
  // An unwritable overlay path fails before any fitting, with exit 2.
  const auto nowhere = gf::test::run_cli({"calibrate", "dgx-a100", "--log", log, "-o", "/nonexistent/dir/x.yaml"});
  EXPECT_EQ(nowhere.code, 2);
}

}  // namespace
}  // namespace gf
