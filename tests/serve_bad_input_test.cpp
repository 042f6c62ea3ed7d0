// `gpufabric serve` under hostile input (issue 34): token counts that overflowed past the KV
// check and hung, the KV error that blamed --isl for a long --osl, load sizes inside the old caps
// that ran for minutes or gigabytes, and an arrivals file whose bytes reached the terminal raw.
// Every case is refused before any long simulation starts, except the work budget, which is
// tested on the simulator directly with a tiny budget.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"
#include "work/model_library.hpp"
#include "work/serving_fleet.hpp"

using gf::test::run_cli;
using namespace gf::work;

namespace {

const std::string kMax = "9223372036854775807";  // 2^63 - 1

gf::test::CliResult serve(std::vector<std::string> args) {
  args.insert(args.begin(), {"serve", "dgx-h100", "--model", "llama3.1-8b"});
  return run_cli(args);
}

// Exit 2, and the message names `field` (quoted, as InputError prints it) and says `what`.
void expect_refused(const std::vector<std::string>& args, const std::string& field, const std::string& what) {
  const auto r = serve(args);
  std::string cmd;
  for (const auto& a : args) cmd += a + " ";
  EXPECT_EQ(r.code, 2) << cmd << r.err;
  EXPECT_NE(r.err.find("'" + field + "'"), std::string::npos) << cmd << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << cmd << r.err;
}

ReplicaSpec tp1() {
  ReplicaSpec r;
  r.tp = 1;
  return r;
}

}  // namespace

// 2^63 - 1 tokens used to overflow input + output to a negative length, which passed the KV
// check, and the simulation never ended. Every place a count is read refuses it.
TEST(ServeBadInput, TokenCountsAreBoundedWhereRead) {
  const std::string cap = std::to_string(kMaxRequestTokens);
  expect_refused({"--isl", kMax}, "--isl", cap);
  expect_refused({"--osl", kMax}, "--osl", cap);
  expect_refused({"--osl", "9223372036854775808"}, "--osl", cap);  // beyond a long: still a number
  expect_refused({"--isl", std::to_string(kMaxRequestTokens + 1)}, "--isl", cap);

  gf::test::ScratchDir dir;
  const auto hist = dir.write("isl.csv", "tokens,weight\n100,1\n" + kMax + ",1\n");
  auto r = serve({"--isl", hist});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("isl.csv:3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'tokens'"), std::string::npos) << r.err;

  for (const auto& [row, field] : std::vector<std::pair<std::string, std::string>>{
           {"0.1," + kMax + ",10", "input_tokens"}, {"0.1,10," + kMax, "output_tokens"}}) {
    const auto trace = dir.write("trace.csv", "0,100,10\n" + row + "\n");
    r = serve({"--arrivals", trace});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("trace.csv:2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'" + field + "'"), std::string::npos) << r.err;
  }
}

// The simulator's own check adds lengths at the cap without overflow and names both.
TEST(ServeBadInput, KvCheckAddsLongestLengthsWithoutOverflow) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), tp1(), 1);
  const std::vector<Request> requests = {{0, kMaxRequestTokens, kMaxRequestTokens}};
  try {
    (void)set.run(requests, 0, SimulationOptions{});
    FAIL() << "a request longer than the KV cache ran";
  } catch (const gf::InputError& e) {
    EXPECT_EQ(e.field(), "--isl + --osl");
    EXPECT_NE(e.problem().find(std::to_string(2 * kMaxRequestTokens)), std::string::npos) << e.problem();
  }
}

// `--osl 10000000` used to blame --isl. The message names the length that is too long by
// itself, or both when only their sum is (llama3.1-8b at TP 1 holds about 418,000 tokens).
TEST(ServeBadInput, KvErrorNamesTheLengthThatIsTooLong) {
  expect_refused({"--osl", "10000000"}, "--osl", std::to_string(kMaxRequestTokens));
  // A quarter of the GPU's memory leaves a KV cache of about 32k tokens: lengths within the
  // model's context (131,072) that the cache cannot hold.
  const std::vector<std::string> small = {"--gpu-memory-utilization", "0.25", "--requests", "1"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), small.begin(), small.end());
    return args;
  };
  expect_refused(with({"--osl", "50000"}), "--osl", "exceeds the KV cache");
  expect_refused(with({"--isl", "50000"}), "--isl", "exceeds the KV cache");
  expect_refused(with({"--isl", "20000", "--osl", "20000"}), "--isl + --osl", "exceeds the KV cache");
  gf::test::ScratchDir dir;
  const auto trace = dir.write("long.csv", "0,100,10\n1,100,50000\n");
  expect_refused({"--arrivals", trace, "--gpu-memory-utilization", "0.25"}, "--arrivals output_tokens",
                 "exceeds the KV cache");
}

// A prompt beyond the model's context, or a prompt and answer that are together, was simulated
// as if the model took it; vLLM refuses such a request. Each length is named, and the context.
TEST(ServeBadInput, LengthsBeyondTheModelsContextAreRefused) {
  expect_refused({"--isl", "200000"}, "--isl", "longer than llama3.1-8b's context of 131072 tokens");
  expect_refused({"--osl", "140000", "--requests", "1"}, "--osl", "context of 131072");
  expect_refused({"--ramp-up", "5s"}, "--ramp-up", "without --concurrency");
  expect_refused({"--isl", "130000", "--osl", "2000"}, "--isl + --osl", "130000 input + 2000 output");
  gf::test::ScratchDir dir;
  const auto trace = dir.write("long.csv", "0,100,10\n1,131000,100\n");
  expect_refused({"--arrivals", trace}, "--arrivals input_tokens + --arrivals output_tokens", "context of 131072");
  const auto hist = dir.write("isl.csv", "1000,1\n140000,0.001\n");
  expect_refused({"--isl", hist}, "--isl", "a prompt of 140000 tokens");
  // Exactly the context is taken.
  EXPECT_EQ(serve({"--isl", "131000", "--osl", "72", "--requests", "1", "--format", "json"}).code, 0);
}

// Sizes within the old caps ran for minutes (--concurrency 1000000), ended in "out of memory ...
// try fewer nodes" (--requests 67108864), or had no cap at all (--rate x --duration).
TEST(ServeBadInput, LoadSizesAreCappedAtWhatRunsInSeconds) {
  expect_refused({"--concurrency", "1000000"}, "--concurrency", "50000");
  expect_refused({"--requests", "67108864"}, "--requests", std::to_string(kMaxRequests));
  const auto oom = serve({"--requests", "67108864"});
  EXPECT_EQ(oom.err.find("out of memory"), std::string::npos) << oom.err;
  expect_refused({"--offline", "2000000"}, "--offline", std::to_string(kMaxRequests));
  expect_refused({"--rate", "1000000", "--duration", "1000h"}, "--rate x --duration", std::to_string(kMaxRequests));
  // Within the request cap, the steps they ask for (requests x output tokens) are capped too.
  expect_refused({"--requests", "600000"}, "--requests x (--isl, --osl)", "134217728");
  expect_refused({"--concurrency", "50000", "--osl", "1024"}, "--concurrency x (--isl, --osl)", "134217728");
  expect_refused({"--rate", "100", "--duration", "2h"}, "--rate x --duration x (--isl, --osl)", "134217728");
  expect_refused({"--offline", "1000000"}, "--offline x (--isl, --osl)", "134217728");
  // Curves count every point before the first runs.
  std::string many = "1";
  for (int i = 0; i < 64; ++i) many += ",1";
  expect_refused({"--sweep-rate", many}, "--sweep-rate", "at most 64 points");
  expect_refused({"--sweep-concurrency", "1000000"}, "--sweep-concurrency", "50000");
  expect_refused({"--sweep-concurrency", "50000,50000"}, "--sweep-concurrency x (10 x clients) x (--isl, --osl)",
                 "134217728");
  // Fleet sizing simulates each layout about 15 times; its peak is a bounded multiple.
  const std::vector<std::string> sizing = {"--rate", "5", "--slo-ttft", "1s", "--slo-tpot", "60ms"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), sizing.begin(), sizing.end());
    return extra;
  };
  expect_refused(with({"--requests", "8001"}), "--requests", "at most 8000");
  expect_refused(with({"--peak", "1001"}), "--peak", "got '1001'");
}

TEST(ServeBadInput, ArrivalsFilesHoldAtMostTheRequestCap) {
  std::string text;
  text.reserve(static_cast<std::size_t>(kMaxRequests + 1) * 6);
  for (long i = 0; i <= kMaxRequests; ++i) text += "0,1,1\n";
  try {
    (void)parse_trace(text, "big.csv");
    FAIL() << "a trace of more rows than a run may hold was read";
  } catch (const gf::InputError& e) {
    EXPECT_EQ(e.where().line, kMaxRequests + 1);
    EXPECT_EQ(e.field(), "trace");
  }
  std::string hist;
  for (long i = 0; i <= kMaxRequests; ++i) hist += "1,1\n";
  EXPECT_THROW((void)LengthDistribution::from_histogram(hist, "h.csv"), gf::InputError);
}

// Batches that stay small (here: a budget of a few iterations) stop with a message naming the
// flags, and fleet sizing passes that on instead of taking it for one layout's failure.
TEST(ServeBadInput, TheWorkBudgetStopsARunAndASizing) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-8b");
  WorkBudget tiny;
  tiny.left = 1000;
  SimulationOptions o;
  o.budget = &tiny;
  o.requests_field = "--arrivals";  // the message names what set the requests
  const ReplicaSet set(ctx, m, tp1(), 1);
  try {
    (void)set.run(std::vector<Request>(100, Request{0, 1024, 256}), 0, o);
    FAIL() << "the run outlived its budget";
  } catch (const SimulationTooLarge& e) {
    EXPECT_EQ(e.field(), "--arrivals");
    EXPECT_NE(e.valid().find("--max-batch-tokens"), std::string::npos) << e.valid();
  }
  LoadSpec load;
  load.kind = ArrivalKind::poisson;
  load.requests = 100;
  SloSpec slo;
  slo.ttft_s = 1;
  slo.tpot_s = 0.06;
  SizingOptions so;
  so.requests = 100;
  WorkBudget small;
  small.left = 1e5;
  so.simulation.budget = &small;
  EXPECT_THROW((void)size_fleet(ctx, m, {tp1()}, load, 5, slo, so), SimulationTooLarge);
}

// The arrivals reader once echoed an ESC from the file into its message; every InputError
// message now passes through gf::printable. A bad row with a colour escape, and one with a byte
// that is not UTF-8, give exit 2 and no raw ESC or 0xff on the terminal.
TEST(ServeBadInput, ArrivalsErrorsNeverEchoRawControlBytes) {
  gf::test::ScratchDir dir;
  for (const std::string row : {"0.1,\x1b[31mred,10", "0.1,\x1b[31m\xff,10"}) {
    const auto trace = dir.write("esc.csv", "0,100,10\n" + row + "\n");
    const auto r = serve({"--arrivals", trace});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("esc.csv:2"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\xff'), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  }
}
