// Issue 34, bad input held: YAML aliases that expand exponentially, nccl-tests logs whose rows
// were not printed by nccl-tests, names with terminal escapes in the schedule's tables, output
// that must not change between identical runs, and command-line flags that are empty, zero,
// inert, conflicting or stray. Each is exit 2 with a message naming the file or flag.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "calib/nccl_tests_log.hpp"
#include "core/yaml_fields.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"

namespace gf {
namespace {

using test::run_cli;

// Exit 2, and the message holds every one of `needles`.
void expect_refused(const test::CliResult& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  for (const auto& n : needles) EXPECT_NE(r.err.find(n), std::string::npos) << "'" << n << "' in: " << r.err;
}

// ---- YAML aliases ----

// "Billion laughs": nine levels of nine aliases, 9^9 scalars once expanded, in 414 bytes (the was 478).
std::string billion_laughs() {
  return "a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n"
         "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
         "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
         "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
         "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
         "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
         "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
         "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
}

TEST(YamlAliases, ExpansionIsBoundedWhereTheDocumentIsParsed) {
  const std::string text = billion_laughs();
  ASSERT_LT(text.size(), 500u);
  const std::string msg = test::input_error([&] { (void)parse_yaml(text, "laughs.yaml"); });
  EXPECT_NE(msg.find("laughs.yaml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("aliases expand the document to more than 1000000 nodes"), std::string::npos) << msg;
  // Aliases that stay small are YAML as usual.
  const YAML::Node ok = parse_yaml("a: &a [1, 2]\nb: *a\n", "small.yaml");
  EXPECT_EQ(ok["b"].size(), 2u);
}

TEST(YamlAliases, EveryReaderIsProtected) {
  test::ScratchDir dir;
  const std::string file = dir.write("laughs.yaml", billion_laughs());
  expect_refused(run_cli({"topo", "--cluster", file}), {"laughs.yaml", "aliases expand"});
  expect_refused(run_cli({"plan", file}), {"laughs.yaml", "aliases expand"});
  expect_refused(run_cli({"train", "dgx-h100", "--model-file", file}), {"laughs.yaml", "aliases expand"});
}

// ---- nccl-tests logs ----

std::string log_of(const std::string& rows) {
  return "# Collective test starting: all_reduce_perf\n#  nThread 1 nGpus 1 graph: 0\n#\n" + rows;
}

TEST(NcclTestsLog, AnUnknownTypeIsRefusedAtItsLine) {
  const std::string msg = test::input_error([] {
    (void)calib::parse_nccl_tests_log(log_of("1024 256 float sum -1 10 0.1 0.1 0\n1024 256 quad sum -1 10 0.1 0.1 0\n"),
                                      "t.log", "");
  });
  EXPECT_NE(msg.find("t.log:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("field 'type'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'quad'"), std::string::npos) << msg;
}

TEST(NcclTestsLog, ACountThatDoesNotMatchTheSizeIsRefusedAtItsLine) {
  // 1024 bytes of float are 256 elements, not 200.
  const std::string msg = test::input_error(
      [] { (void)calib::parse_nccl_tests_log(log_of("1024 200 float sum -1 10 0.1 0.1 0\n"), "c.log", ""); });
  EXPECT_NE(msg.find("c.log:4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("field 'count'"), std::string::npos) << msg;
  // all_gather prints its count per rank: size = count x 4 x ranks, the same ranks on every row.
  const std::string ag = "# Collective test starting: all_gather_perf\n";
  const auto good = calib::parse_nccl_tests_log(
      ag + "1024 32 float none -1 10 0.1 0.1 0\n2048 64 float none -1 10 0.1 0.1 0\n", "ag.log", "");
  EXPECT_EQ(good.rows.size(), 2u);
  const std::string ranks = test::input_error([&] {
    (void)calib::parse_nccl_tests_log(ag + "1024 32 float none -1 10 0.1 0.1 0\n2048 128 float none -1 10 0.1 0.1 0\n",
                                      "ag.log", "");
  });
  EXPECT_NE(ranks.find("ag.log:3"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find("ranks"), std::string::npos) << ranks;
}

TEST(NcclTestsLog, MessagesEscapeTheBytesTheyQuote) {
  test::ScratchDir dir;
  const std::string file = dir.write("raw.log", log_of("1024 256 float sum -1 fa\xff\x1b[2Jst 0.1 0.1 0\n"));
  const auto r = run_cli({"calibrate", "dgx-h100", "--log", file + ":all_reduce"});
  expect_refused(r, {"raw.log:4", "\\xff", "\\x1b"});
  EXPECT_EQ(r.err.find('\xff'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
}

// ---- schedule ----

// Jobs named with terminal escapes; the second needs more GPUs than any node has, so the table
// names it as unschedulable.
struct ScheduleFiles {
  test::ScratchDir dir;
  std::string jobs = dir.write("jobs.csv",
                               "name,submit,duration,gpus,pods\n\x1b]0;owned\x07job,0,100,8,1\n\x1b[2Jbig,5,50,16,1\n"
                               "c,20,10,1,1\n");
  std::string nodes =
      dir.write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,8,G\x1b[31m\nn1,64000,262144,8,G\n");
};

TEST(ScheduleOutput, NamesFromTheInputAreEscapedInTextAndCsv) {
  const ScheduleFiles f;
  for (const char* format : {"table", "csv"}) {
    const auto r = run_cli({"schedule", "--trace", f.jobs, "--nodes-file", f.nodes, "--format", format});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << format << ":\n" << r.out;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << format << ":\n" << r.out;
    EXPECT_NE(r.out.find("\\x1b[2Jbig"), std::string::npos) << format << ":\n" << r.out;
  }
  const std::string csv = f.dir.file("jobs-out.csv");
  ASSERT_EQ(run_cli({"schedule", "--trace", f.jobs, "--nodes-file", f.nodes, "--jobs-csv", csv}).code, 0);
  std::ifstream in(csv);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(written.find('\x1b'), std::string::npos) << written;
}

TEST(ScheduleOutput, IdenticalRunsPrintIdenticalOutput) {
  const ScheduleFiles f;
  for (const char* format : {"table", "json", "csv"}) {
    const std::vector<std::string> args{"schedule", "--trace",   f.jobs,     "--nodes-file",
                                        f.nodes,    "--compare", "--format", format};
    const auto a = run_cli(args);
    const auto b = run_cli(args);
    ASSERT_EQ(a.code, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << format;
    EXPECT_EQ(a.out.find("simulation_s"), std::string::npos) << format;
    EXPECT_EQ(a.out.find("sim s"), std::string::npos) << format;
  }
}

// ---- flags ----

TEST(Flags, AnEmptyValueIsRefusedForEveryOption) {
  expect_refused(run_cli({"topo", "dgx-h100", "--nodes", ""}), {"'--nodes'", "empty value"});
  expect_refused(run_cli({"plan", "--db", ""}), {"'--db'", "empty value"});
  expect_refused(run_cli({"plan", "--report", ""}), {"'--report'", "empty value"});
  expect_refused(run_cli({"schedule", "--trace", ""}), {"'--trace'", "empty value"});
  expect_refused(run_cli({"collective", "all_reduce", "dgx-h100", "-b", ""}), {"'--minbytes'", "empty value"});
  expect_refused(run_cli({"topo", ""}), {"'CLUSTER'", "empty value"});
  expect_refused(run_cli({"calibrate", "dgx-h100", "--log", ""}), {"'--log'", "empty value"});
  // An option whose value may be left out is still accepted without one.
  EXPECT_EQ(run_cli({"serve", "dgx-h100", "--model", "llama3.1-8b", "--offline", "--requests", "20"}).code, 0);
}

TEST(Flags, ZeroIsRefusedWhereItOnceMeantTheDefault) {
  expect_refused(run_cli({"pipeline", "dgx-h100", "--input", "imagenet-resnet50", "--batch", "0"}),
                 {"'--batch'", "from 1"});
  expect_refused(run_cli({"pipeline", "dgx-h100", "--input", "imagenet-resnet50", "--loader-cores", "0"}),
                 {"'--loader-cores'", "from 1"});
  expect_refused(run_cli({"train", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "0"}),
                 {"'--global-batch'", "from 1"});
  expect_refused(run_cli({"train", "dgx-h100", "--model", "llama3.1-8b", "--gpus", "0"}), {"'--gpus'", "from 1"});
  expect_refused(run_cli({"train", "dgx-h100", "--model", "llama3.1-8b", "--dp", "0"}), {"'--dp'", "from 1"});
  expect_refused(run_cli({"collective", "all_reduce", "dgx-h100", "--gpus", "0"}), {"'--gpus'", "from 1"});
  expect_refused(run_cli({"calibrate", "dgx-h100", "--log", "x.log", "--gpus", "0"}), {"'--gpus'"});
  expect_refused(run_cli({"plan", "--threads", "0"}), {"'--threads'", "from 1"});
  // Left out, each still takes its default.
  EXPECT_EQ(run_cli({"collective", "all_reduce", "dgx-h100"}).code, 0);
  EXPECT_EQ(run_cli({"train", "dgx-h100", "--model", "llama3.1-8b"}).code, 0);
}

// A batch inside the old cap (2^30 sequences) ran for about a minute, one micro-batch at a time.
TEST(Flags, TheGlobalBatchIsCappedWhereItStillRunsInAFractionOfASecond) {
  expect_refused(run_cli({"train", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "1073741824"}),
                 {"'--global-batch'", "1048576"});
  EXPECT_EQ(run_cli({"train", "dgx-h100", "--model", "llama3.1-8b", "--global-batch", "1048576"}).code, 0);
}

TEST(Flags, InertAndConflictingOptionsNameBothFlags) {
  const std::vector<std::string> job{"train", "dgx-h100", "--model", "llama3.1-8b"};
  auto with = [&](std::vector<std::string> more) {
    auto args = job;
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args);
  };
  expect_refused(with({"--vpp", "2"}), {"'--vpp'", "--pp"});
  expect_refused(with({"--fsdp", "full", "--zero", "3"}), {"'--fsdp'", "--zero"});
  expect_refused(with({"--sequence-parallel"}), {"'--sequence-parallel'", "--tp"});
  expect_refused(with({"--scaling", "strong"}), {"'--scaling'", "--scale"});
  expect_refused(with({"--scale", "1,2", "--gpus", "8"}), {"'--gpus'", "--scale"});
  expect_refused(with({"--network-fs", "nfs", "--input", "imagenet-resnet50"}), {"'--network-fs'", "--source"});
  expect_refused(with({"--decode", "cpu"}), {"'--decode'", "--input"});
  expect_refused(run_cli({"train", "dgx-h100", "--layers", "2", "--hidden", "64", "--heads", "4", "--seq", "8",
                          "--vocab", "10", "--top-k", "2"}),
                 {"'--top-k'", "--experts"});
  // schedule: an option of a mode that does not run.
  expect_refused(run_cli({"schedule", "--gpus", "2", "--trace", "x.csv"}), {"'--gpus'", "--mig-pack"});
  expect_refused(run_cli({"schedule", "dgx-h100", "--rate", "3", "--trace", "x.csv"}), {"'--rate'", "--share"});
  expect_refused(run_cli({"schedule", "--trace", "x.csv", "--repeats", "3"}), {"'--repeats'", "--fill"});
  // The interleaved schedule with the stages it interleaves is accepted; on two stages only with
  // its sends overlapped, as Megatron requires (PP > 2 otherwise).
  EXPECT_EQ(with({"--pp", "2", "--vpp", "2", "--overlap-p2p-comm", "--global-batch", "8"}).code, 0);
  expect_refused(with({"--pp", "2", "--vpp", "2", "--global-batch", "8"}), {"'--vpp'", "--overlap-p2p-comm"});
}

TEST(Flags, StrayArgumentsAreNamedWithWhatTheCommandTakes) {
  expect_refused(run_cli({"train", "dgx-h100", "x"}), {"stray argument 'x'", "`train` takes CLUSTER"});
  expect_refused(run_cli({"train", "--preset", "dgx-h100", "x"}),
                 {"stray argument 'x'", "--preset dgx-h100 already names the cluster"});
  expect_refused(run_cli({"plan", "a.yaml", "b.yaml"}), {"stray argument 'b.yaml'", "`plan` takes PLAN"});
  expect_refused(run_cli({"topo", "--preset", "dgx-h100", "extra"}), {"stray argument 'extra'"});
  expect_refused(run_cli({"presets", "extra"}), {"stray argument 'extra'", "no positional arguments"});
  expect_refused(run_cli({"collective", "all_reduce", "dgx-h100", "extra"}),
                 {"stray argument 'extra'", "OP (", "CLUSTER ("});
  expect_refused(run_cli({"train", "dgx-h100", "--modle", "llama3.1-8b"}), {"'--modle'", "did you mean '--model'"});
}

}  // namespace
}  // namespace gf
