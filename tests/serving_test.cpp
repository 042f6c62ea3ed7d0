// The serving model: the cost of one iteration, the iteration-level simulator, fleet sizing,
// `gpufabric serve` as a user runs it, and the validation suite.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "report/serving_validation_report.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"
#include "validate/serving_validation.hpp"
#include "work/kv_transfer.hpp"
#include "work/mig_profile.hpp"
#include "work/model_library.hpp"
#include "work/serving_fleet.hpp"

using gf::test::run_cli;
using namespace gf::work;

namespace {

ReplicaSpec replica(long tp, WeightFormat w = WeightFormat::bf16, WeightFormat kv = WeightFormat::bf16) {
  ReplicaSpec r;
  r.tp = tp;
  r.weights = w;
  r.kv = kv;
  return r;
}

std::vector<long> first(long n) {
  std::vector<long> g;
  for (long i = 0; i < n; ++i) g.push_back(i);
  return g;
}

LoadSpec fixed_load(ArrivalKind kind, long requests, long isl, long osl) {
  LoadSpec l;
  l.kind = kind;
  l.requests = requests;
  l.input = LengthDistribution(isl);
  l.output = LengthDistribution(osl);
  return l;
}

nlohmann::json serve(std::vector<std::string> args) {
  args.insert(args.begin(), "serve");
  args.insert(args.end(), {"--format", "json"});
  const auto r = run_cli(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

}  // namespace

// GQA at TP 8: Llama 3.1 70B's 8 KV heads leave one per GPU, so a token's KV cache on a GPU is
// K and V of one head over 80 layers: 2 x 128 x 80 values.
TEST(InferenceCost, KvCachePerTokenFollowsGqaAndPrecision) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-70b");
  InferenceCost fp8(ctx, m, replica(8, WeightFormat::fp8, WeightFormat::fp8), first(8));
  EXPECT_DOUBLE_EQ(fp8.kv_bytes_per_token_per_gpu(), 2.0 * 128 * 80 * 1);
  InferenceCost bf16(ctx, m, replica(8), first(8));
  EXPECT_DOUBLE_EQ(bf16.kv_bytes_per_token_per_gpu(), 2.0 * 128 * 80 * 2);
  // Weights halve from bf16 to fp8 (blocks only: embeddings stay in 16 bits).
  EXPECT_LT(fp8.weight_bytes_per_gpu(), 0.6 * bf16.weight_bytes_per_gpu());
  EXPECT_GT(fp8.kv_capacity_tokens(), bf16.kv_capacity_tokens());
}

// Decode at a small batch reads every weight for a few tokens: HBM-bound. A long prefill chunk is
// FLOP-bound. The TP all-reduces are counted as communication.
TEST(InferenceCost, DecodeIsMemoryBoundAndPrefillComputeBound) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  InferenceCost c(ctx, library_model("llama3.1-70b"), replica(4), first(4));
  IterationWork decode;
  decode.decode_sequences = 8;
  decode.decode_context = 8 * 1000;
  const IterationTime d = c.iteration(decode);
  EXPECT_GT(d.memory, d.compute);
  EXPECT_GT(d.communication, 0);
  EXPECT_NEAR(d.seconds, d.compute + d.memory + d.communication, 1e-12);
  IterationWork prefill;
  prefill.prefill_tokens = 8192;
  prefill.prefill_attention = 8192.0 * 8193 / 2;
  prefill.prefill_sequences = 1;
  const IterationTime p = c.iteration(prefill);
  EXPECT_GT(p.compute, p.memory);
  // A weight read costs the same for 8 tokens or 16: decode time barely grows with the batch.
  IterationWork decode16 = decode;
  decode16.decode_sequences = 16;
  decode16.decode_context = 16 * 1000;
  EXPECT_LT(c.iteration(decode16).seconds, 1.3 * d.seconds);
}

TEST(InferenceCost, RefusesWhatCannotRun) {
  const auto h100 = gf::test::preset("dgx-h100");
  TrainingContext ctx(h100);
  // 405B in bf16 on one 80 GB GPU: say how much is needed.
  try {
    InferenceCost c(ctx, library_model("llama3.1-405b"), replica(1), first(1));
    FAIL() << "405B fitted on one GPU";
  } catch (const gf::InputError& e) {
    EXPECT_NE(std::string(e.problem()).find("GiB of weights"), std::string::npos) << e.problem();
    EXPECT_NE(std::string(e.valid()).find("TP x PP of at least"), std::string::npos) << e.valid();
  }
  // fp8 needs Ada or Hopper; fp4 needs Blackwell.
  const auto a100 = gf::test::preset("dgx-a100");
  TrainingContext actx(a100);
  EXPECT_THROW(InferenceCost(actx, library_model("llama3.1-8b"), replica(1, WeightFormat::fp8), first(1)),
               gf::InputError);
  EXPECT_THROW(InferenceCost(ctx, library_model("llama3.1-8b"), replica(1, WeightFormat::fp4), first(1)),
               gf::InputError);
  // TP must divide the heads.
  EXPECT_THROW(InferenceCost(ctx, library_model("llama3.1-8b"), replica(3), first(3)), gf::InputError);
}

// The same seed gives the same run; arrivals and lengths drawn from a histogram follow it.
TEST(ServingSim, DeterministicUnderASeed) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  LoadSpec l = fixed_load(ArrivalKind::poisson, 300, 512, 128);
  l.rate = 5;
  l.seed = 7;
  const auto a = simulate_serving(set.replicas(), generate_requests(l), 0, {});
  const auto b = simulate_serving(set.replicas(), generate_requests(l), 0, {});
  ASSERT_EQ(a.requests.size(), 300u);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (std::size_t i = 0; i < a.requests.size(); ++i) EXPECT_EQ(a.requests[i].finish_s, b.requests[i].finish_s);
  l.seed = 8;
  const auto c = simulate_serving(set.replicas(), generate_requests(l), 0, {});
  EXPECT_NE(a.requests.back().finish_s, c.requests.back().finish_s);
}

// One request alone: TTFT is its prefill, TPOT one decode iteration, E2E the sum.
TEST(ServingSim, ALoneRequestTakesItsPrefillThenItsDecodes) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  InferenceCost& cost = set.first();
  const auto run =
      simulate_serving(set.replicas(), generate_requests(fixed_load(ArrivalKind::offline, 1, 1000, 100)), 0, {});
  ASSERT_EQ(run.requests.size(), 1u);
  IterationWork p;
  p.prefill_tokens = 1000;
  p.prefill_attention = 1000.0 * 1001 / 2;
  p.prefill_sequences = 1;
  EXPECT_NEAR(run.requests[0].ttft(), cost.iteration(p).seconds, 1e-9);
  IterationWork d;
  d.decode_sequences = 1;
  d.decode_context = 1050;
  EXPECT_NEAR(run.requests[0].tpot(), cost.iteration(d).seconds, 0.02 * cost.iteration(d).seconds);
  EXPECT_EQ(run.max_batch, 1);
}

// Chunked prefill: a 20,000-token prompt under an 8,192-token budget takes three iterations; no
// chunking refuses it with a clear message.
TEST(ServingSim, ChunkedPrefillSplitsLongPrompts) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  SimulationOptions o;
  o.record_trace = true;
  const auto reqs = generate_requests(fixed_load(ArrivalKind::offline, 1, 20000, 2));
  const auto run = simulate_serving(set.replicas(), reqs, 0, o);
  ASSERT_GE(run.trace.size(), 4u);
  EXPECT_EQ(run.trace[0].prefill_tokens, 8192);
  EXPECT_EQ(run.trace[1].prefill_tokens, 8192);
  EXPECT_EQ(run.trace[2].prefill_tokens, 20000 - 2 * 8192);
  o.scheduler.chunked_prefill = false;
  EXPECT_THROW(simulate_serving(set.replicas(), reqs, 0, o), gf::InputError);
}

// A small KV cache: vLLM-style admission preempts; TensorRT-LLM's no-evict policy never does and
// holds fewer requests at once.
TEST(ServingSim, KvPressurePreemptsOrHoldsBack) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  ReplicaSpec r = replica(1, WeightFormat::fp8, WeightFormat::fp8);
  r.gpu_memory_utilization = 0.2;  // 16 GB: about 8 GB of KV cache
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), r, 1);
  const auto reqs = generate_requests(fixed_load(ArrivalKind::offline, 400, 2000, 2000));
  SimulationOptions o;
  o.scheduler.max_seqs = 1024;
  const auto preempt = simulate_serving(set.replicas(), reqs, 0, o);
  EXPECT_GT(preempt.preemptions, 0);
  o.scheduler.reserve_output = true;
  const auto reserve = simulate_serving(set.replicas(), reqs, 0, o);
  EXPECT_EQ(reserve.preemptions, 0);
  EXPECT_LT(reserve.max_batch, preempt.max_batch);
  EXPECT_EQ(reserve.requests.size(), 400u);
  EXPECT_LE(reserve.kv_peak, 1.0);
  EXPECT_EQ(summarize(preempt, 0, {}, true).bound, "KV capacity");
}

// A fixed concurrency never has more requests in flight than clients.
TEST(ServingSim, ConcurrencyCapsTheBatch) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  const auto run =
      simulate_serving(set.replicas(), generate_requests(fixed_load(ArrivalKind::offline, 500, 256, 64)), 16, {});
  EXPECT_EQ(run.requests.size(), 500u);
  EXPECT_EQ(run.max_batch, 16);
}

// Arrivals faster than service: not an error; the summary says overloaded and by how much.
TEST(ServingSim, OverloadIsReportedNotAnError) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-70b"), replica(8), 1);
  LoadSpec l = fixed_load(ArrivalKind::poisson, 600, 1024, 256);
  l.rate = 500;
  const auto s = summarize(simulate_serving(set.replicas(), generate_requests(l), 0, {}), 500, {}, true);
  EXPECT_TRUE(s.overloaded);
  EXPECT_GT(s.overload_factor, 2);
  l.rate = 0.5;
  const auto light = summarize(simulate_serving(set.replicas(), generate_requests(l), 0, {}), 0.5, {}, true);
  EXPECT_FALSE(light.overloaded);
}

// Two replicas serve about twice one replica's offline throughput, and the balancer uses both.
TEST(ServingSim, ReplicasAddThroughput) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-8b");
  const auto reqs = generate_requests(fixed_load(ArrivalKind::offline, 800, 512, 128));
  const ReplicaSet one(ctx, m, replica(1), 1), two(ctx, m, replica(1), 2);
  const double a = summarize(simulate_serving(one.replicas(), reqs, 0, {}), 0, {}, true).output_tokens_per_s;
  const double b = summarize(simulate_serving(two.replicas(), reqs, 0, {}), 0, {}, true).output_tokens_per_s;
  EXPECT_GT(b, 1.7 * a);
  EXPECT_LT(b, 2.2 * a);
}

// Seeds' point: an 8-GPU PCIe box without NVLink pays for every TP all-reduce. The same TP 4
// layout spends a far larger share communicating on L40S PCIe than on an NVSwitch H100 node.
TEST(ServingSim, PcieBoxesPayForTensorParallelism) {
  auto share = [](const char* preset) {
    const auto t = gf::test::preset(preset);
    TrainingContext ctx(t);
    const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(4), 1);
    const auto run =
        simulate_serving(set.replicas(), generate_requests(fixed_load(ArrivalKind::offline, 200, 512, 128)), 32, {});
    return summarize(run, 0, {}, true).communication_share;
  };
  EXPECT_GT(share("pcie-8x-l40s"), 3 * share("dgx-h100"));
}

namespace {

// TTFT p90 (ms) of the requests that arrived in [from, to) seconds.
double ttft_p90(const ServingRun& run, double from, double to) {
  std::vector<double> v;
  for (const auto& r : run.requests)
    if (r.arrival_s >= from && r.arrival_s < to) v.push_back(1e3 * r.ttft());
  return percentile(v, 90);
}

}  // namespace

// Eight replicas at half their capacity with fixed lengths: a long run settles where a short one
// does. A balancer that scans for the fewest requests and breaks ties by position grew the TTFT
// p90 from about 94 ms over 8k requests to 270 ms after a few minutes (cohorts of requests that
// end in the same iteration kept being refilled together); drawing two replicas at random keeps
// the second half of a long run within 15% of a short run and of its own first half.
TEST(ServingSim, LongRunsUnderABalancerAreStationary) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 8);
  LoadSpec l = fixed_load(ArrivalKind::poisson, 8000, 1024, 128);
  l.rate = 120;  // offline capacity is about 230 req/s
  const double short_p90 = ttft_p90(set.run(generate_requests(l), 0, {}), 0, 1e30);
  l.requests = 48000;  // 400 s
  const ServingRun long_run = set.run(generate_requests(l), 0, {});
  const double first = ttft_p90(long_run, 0, 200), second = ttft_p90(long_run, 200, 1e30);
  EXPECT_NEAR(second / short_p90, 1.0, 0.15) << second << " ms against " << short_p90 << " ms";
  EXPECT_NEAR(second / first, 1.0, 0.15) << second << " ms against " << first << " ms";
}

// The balancer's draws follow --seed: the same seed gives the same run, another seed another.
TEST(ServingSim, BalancerDrawsFollowTheSeed) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 4);
  LoadSpec l = fixed_load(ArrivalKind::poisson, 400, 512, 64);
  l.rate = 40;
  const auto reqs = generate_requests(l);
  SimulationOptions o;
  o.seed = 3;
  const auto a = set.run(reqs, 0, o), b = set.run(reqs, 0, o);
  o.seed = 4;
  const auto c = set.run(reqs, 0, o);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  bool differs = false;
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].finish_s, b.requests[i].finish_s);
    differs = differs || a.requests[i].finish_s != c.requests[i].finish_s;
  }
  EXPECT_TRUE(differs);
}

// 20% more arrivals than the service takes: the queue grows by about a sixth of the arrivals over
// the second half of the run. The old test (a drain longer than a fifth of the arrival span)
// missed it; the queue's growth does not, and 80% of the capacity is not overload.
TEST(ServingSim, TwentyPercentOverloadIsFlagged) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  const double capacity =
      summarize(set.run(generate_requests(fixed_load(ArrivalKind::offline, 2000, 1024, 256)), 0, {}), 0, {}, true)
          .requests_per_s;
  auto at = [&](double load) {
    LoadSpec l = fixed_load(ArrivalKind::poisson, 2000, 1024, 256);
    l.rate = load * capacity;
    return summarize(set.run(generate_requests(l), 0, {}), l.rate, {}, true);
  };
  const ServingSummary over = at(1.2);
  EXPECT_TRUE(over.overloaded);
  EXPECT_NEAR(over.overload_factor, 1.2, 0.1);
  EXPECT_NEAR(over.requests_per_s / capacity, 1.0, 0.1);
  EXPECT_FALSE(at(0.8).overloaded);
}

// Throughput and goodput are counted while the load is offered (the measurement window), not
// over the drain: 200 short requests at 10 req/s and a last one with a 6,000-token answer that
// keeps the engine busy about a minute after the last arrival. Over the whole run the rate reads
// about a quarter of what was served; over the window it is the arrival rate.
TEST(ServingSim, ThroughputAndGoodputLeaveTheDrainOut) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  std::vector<Request> reqs;
  for (int i = 0; i < 200; ++i) reqs.push_back({0.1 * i, 512, 64});
  reqs.push_back({20.0, 512, 6000});
  const ServingRun run = set.run(reqs, 0, {});
  ASSERT_GT(run.makespan(), 60);
  SloSpec slo;
  slo.ttft_s = 1;
  slo.tpot_s = 0.1;
  const ServingSummary s = summarize(run, 0, slo, true);
  EXPECT_NEAR(s.requests_per_s, 10, 0.5);
  EXPECT_NEAR(s.output_tokens_per_s, 640, 40);
  EXPECT_NEAR(s.goodput_rps, s.requests_per_s, 1e-9);  // every request meets these goals
  EXPECT_LT(s.window_s, 21);
  EXPECT_LT(201 / run.makespan(), 0.4 * s.requests_per_s);  // what the whole span would say
}

// Sixteen clients with fixed lengths all sent at 0 (vLLM's bench serve issues them at once) are
// prefilled together, finish together and return together: TTFT p90 is within 1% of p50. Started one
// after another at random over a ramp-up (vLLM's --ramp-up-strategy, AIPerf's
// --concurrency-ramp-duration), their prompts meet different batches and TTFT spreads.
TEST(ServingSim, StaggeredClientsLeaveLockstep) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ReplicaSet set(ctx, library_model("llama3.1-8b"), replica(1), 1);
  LoadSpec l = fixed_load(ArrivalKind::concurrency, 1000, 1024, 256);
  l.concurrency = 16;
  auto ttft = [&](const LoadSpec& load) {
    return summarize(set.run(generate_requests(load), load.concurrency, {}), 0, {}, true).ttft_ms;
  };
  const Distribution together = ttft(l);
  EXPECT_NEAR(together.p90 / together.p50, 1.0, 0.01);
  l.ramp_up_s = 3;
  const auto reqs = generate_requests(l);
  EXPECT_GT(reqs[15].arrival_s, reqs[0].arrival_s);
  EXPECT_LE(reqs[15].arrival_s, 3);
  const Distribution staggered = ttft(l);
  EXPECT_LT(staggered.p50, staggered.p90);
  EXPECT_LT(staggered.p50, 0.5 * together.p50);  // prompts no longer wait for 15 others
}

TEST(ServingSim, PercentileInterpolatesLikeNumpy) {
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 100), 4);
  EXPECT_NEAR(percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90), 9.1, 1e-12);
}

TEST(ServingLoad, TraceAndHistogramFilesAreCheckedLineByLine) {
  const auto reqs = parse_trace("arrival_s,input_tokens,output_tokens\n0,100,10\n# comment\n0.5,200,20\n", "t.csv");
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].input, 200);
  try {
    parse_trace("0,100,10\n1,abc,10\n", "t.csv");
    FAIL();
  } catch (const gf::InputError& e) {
    EXPECT_EQ(e.where().line, 2);
  }
  EXPECT_THROW(parse_trace("1,100,10\n0.5,100,10\n", "t.csv"), gf::InputError);  // out of order
  const auto h = LengthDistribution::from_histogram("tokens,weight\n100,1\n300,1\n", "h.csv");
  EXPECT_DOUBLE_EQ(h.mean(), 200);
  EXPECT_EQ(h.max(), 300);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 50; ++i) {
    const long v = h.sample(rng);
    EXPECT_TRUE(v == 100 || v == 300);
  }
  EXPECT_THROW(LengthDistribution::from_histogram("100,-1\n", "h.csv"), gf::InputError);
}

// Fleet sizing: the chosen layout meets the goals under the whole rate, and three times the rate
// needs more GPUs.
TEST(ServingFleet, SizesForTheGoalsAndAPeak) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-8b");
  std::vector<ReplicaSpec> candidates = {replica(1), replica(2)};
  SloSpec slo;
  slo.ttft_s = 0.5;
  slo.tpot_s = 0.05;
  SizingOptions o;
  o.requests = 300;
  const LoadSpec load = fixed_load(ArrivalKind::poisson, 300, 1024, 128);
  const auto base = size_fleet(ctx, m, candidates, load, 20, slo, o);
  ASSERT_GE(base.chosen, 0);
  const auto& c = base.layouts[static_cast<std::size_t>(base.chosen)];
  EXPECT_TRUE(c.fleet.meets_slo);
  EXPECT_GE(static_cast<double>(c.replicas) * c.replica_rate, 20 * 0.99);
  const auto peak = size_fleet(ctx, m, candidates, load, 60, slo, o);
  ASSERT_GE(peak.chosen, 0);
  EXPECT_GT(peak.layouts[static_cast<std::size_t>(peak.chosen)].gpus, c.gpus);
}

// The first command: 70B on a DGX H100 at TP 8 with 64 clients.
TEST(ServeCommand, ReportsThroughputLatencyAndBound) {
  const auto j = serve({"--preset", "dgx-h100", "--model", "llama3.1-70b", "--tp", "8", "--isl", "1024", "--osl", "256",
                        "--concurrency", "64", "--precision", "fp8", "--kv-dtype", "fp8"});
  for (const char* k :
       {"output_tokens_per_s", "requests_per_s", "kv_cache_GiB", "max_batch", "bound", "replicas", "gpus"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"ttft_ms", "tpot_ms"})
    for (const char* s : {"mean", "p50", "p90", "p99"}) EXPECT_TRUE(j[k].contains(s)) << k << " " << s;
  EXPECT_EQ(j["max_batch"].get<long>(), 64);
  EXPECT_EQ(j["gpus"].get<long>(), 8);
  EXPECT_GT(j["output_tokens_per_s"].get<double>(), 1000);
  EXPECT_LE(j["ttft_ms"]["p50"].get<double>(), j["ttft_ms"]["p99"].get<double>());
}

TEST(ServeCommand, SizesAFleetAndThePeak) {
  const auto r = run_cli({"serve", "--preset", "pcie-8x-l40s", "--model", "llama3.1-8b", "--rate", "20", "--slo-ttft",
                          "1s", "--slo-tpot", "60ms", "--peak", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Fleet:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The peak needs"), std::string::npos) << r.out;
}

TEST(ServeCommand, BadInputIsOneClearErrorWithCode2) {
  const std::vector<std::vector<std::string>> bad = {
      {"serve", "--preset", "dgx-h100", "--model", "llama9-70b"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--rate", "-3"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--rate", "0"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--isl", "0"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--osl", "abc"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-405b"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--rate", "5", "--concurrency", "4"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--rate", "5", "--slo-ttft", "1ms", "--slo-tpot",
       "1ms"},
      {"serve", "--preset", "dgx-a100", "--model", "llama3.1-8b", "--precision", "fp8"},
      {"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--gpus", "3", "--tp", "2"},
  };
  for (const auto& args : bad) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args[4] << " " << r.err;
    EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  }
  const gf::test::ScratchDir dir;
  const auto trace = dir.write("bad_trace.csv", "0,100,10\n0.1,100\n");
  const auto r = run_cli({"serve", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--arrivals", trace});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(":2"), std::string::npos) << r.err;
}

// The serving suite: at least 40 evaluated throughput rows from several sources, every row the
// model does not take named with its reason, and issue 12's bar: under 20% MAPE on throughput
// (17.0% over 55 rows at the time of writing; L40S rows half as fast on a PCIe layout whose TP
// all-reduces go through host memory, Mixtral 19-37% fast, B200 fp4 26-37% fast).
TEST(ServingValidation, ThroughputWithinBoundAndSkipsNamed) {
  const auto checks = gf::validate::check_serving(gf::test::catalog());
  ASSERT_GE(checks.size(), 60u);
  long evaluated = 0;
  std::set<std::string> sources;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) continue;
    EXPECT_GT(c.predicted, 0) << c.id << " " << c.metric;
    if (!c.latency && c.scenario != "server") {
      ++evaluated;
      sources.insert(c.source_id);
    }
  }
  EXPECT_GE(evaluated, 40);
  EXPECT_GE(sources.size(), 4u);
  EXPECT_LT(gf::report::serving_throughput_mape(checks), 0.20);
}

// Disaggregation: decode instances never run a prompt, so TPOT falls against co-located replicas
// on the same GPUs; every request that generates more than one token is handed over once, and
// its KV cache moves in about the time NVLink takes for its bytes.
TEST(ServingDisaggregated, PrefillAndDecodeApartTradeTtftForTpot) {
  const auto t = gf::test::preset("dgx-h100");
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-70b");
  const ReplicaSpec r = replica(4, WeightFormat::fp8, WeightFormat::fp8);
  LoadSpec l = fixed_load(ArrivalKind::poisson, 600, 2048, 256);
  l.rate = 8;
  const auto reqs = generate_requests(l);
  const ReplicaSet co(ctx, m, r, 2);
  const ReplicaSet dis(ctx, m, r, 1, DisaggregatedSpec{1, 1}, 2048);
  ASSERT_NE(dis.transfer(), nullptr);
  EXPECT_EQ(dis.gpus(), 8);
  const auto a = co.run(reqs, 0, {});
  const auto b = dis.run(reqs, 0, {});
  EXPECT_EQ(b.requests.size(), 600u);
  EXPECT_EQ(b.kv_transfers, 600);
  const auto sa = summarize(a, 8, {}, true), sb = summarize(b, 8, {}, true);
  EXPECT_LT(sb.tpot_ms.p50, 0.9 * sa.tpot_ms.p50);
  // 2,048 tokens x 40 KiB per GPU pair over NVLink (hundreds of GB/s): well under 10 ms.
  const double per_request = b.kv_transfer_s / static_cast<double>(b.kv_transfers);
  EXPECT_GT(per_request, 2048.0 * 40960 / 900e9);
  EXPECT_LT(per_request, 0.01);
}

// The same KV cache takes longer between nodes (NICs and the fabric) than inside one (NVLink).
TEST(ServingDisaggregated, KvTransferAcrossNodesIsSlowerThanInside) {
  gf::topo::ClusterOverrides o;
  o.nodes = 2;
  const auto t = gf::test::preset("dgx-h100", o);
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-8b");
  InferenceCost prefill(ctx, m, replica(4), {0, 1, 2, 3});
  const KvTransfer inside(ctx, prefill, {0, 1, 2, 3}, {4, 5, 6, 7}, 4096);
  const KvTransfer across(ctx, prefill, {0, 1, 2, 3}, {8, 9, 10, 11}, 4096);
  EXPECT_GT(across.seconds(4096), 2 * inside.seconds(4096));
  EXPECT_GT(inside.seconds(8192), inside.seconds(1024));
}

// --trace writes the iterations as Chrome trace events, one track per engine.
TEST(ServeCommand, TraceHasOneEventPerIteration) {
  const gf::test::ScratchDir dir;
  const auto path = dir.file("serve_trace.json");
  const auto j = serve({"--preset", "dgx-h100", "--model", "llama3.1-8b", "--gpus", "2", "--offline", "50", "--isl",
                        "256", "--osl", "32", "--trace", path});
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  const auto trace = nlohmann::json::parse(in);
  long events = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") {
      ++events;
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  EXPECT_EQ(events, j["iterations"].get<long>());
  EXPECT_EQ(j["replicas"].get<long>(), 2);
}

// A MIG instance has its slice of the SMs, memory bandwidth and memory: a 3g.40gb slice of an
// A100 80GB decodes slower than the whole GPU and holds fewer KV tokens; seven 1g.10gb instances
// fit on one GPU; an unknown profile names the GPU's profiles.
TEST(ServingMig, InstancesHaveTheirSliceOfTheGpu) {
  const auto t = gf::test::preset("dgx-a100");
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-8b");
  ReplicaSpec slice = replica(1);
  slice.mig = "3g.40gb";
  InferenceCost whole(ctx, m, replica(1), {0});
  InferenceCost part(ctx, m, slice, {0});
  IterationWork d;
  d.decode_sequences = 8;
  d.decode_context = 8 * 600;
  EXPECT_GT(part.iteration(d).seconds, 1.5 * whole.iteration(d).seconds);
  EXPECT_LT(part.kv_capacity_tokens(), whole.kv_capacity_tokens() / 2);
  EXPECT_EQ(mig_profile(t.gpu_spec(), "1g.10gb").max_instances, 7);
  try {
    (void)mig_profile(t.gpu_spec(), "1g.5gb");
    FAIL();
  } catch (const gf::InputError& e) {
    EXPECT_NE(e.valid().find("3g.40gb"), std::string::npos) << e.valid();
  }
  ReplicaSpec tp2 = slice;
  tp2.tp = 2;
  EXPECT_THROW(InferenceCost(ctx, m, tp2, {0, 1}), gf::InputError);
  const auto j = serve({"--preset", "dgx-a100", "--model", "llama3.1-8b", "--mig", "1g.10gb", "--offline", "100",
                        "--precision", "int4", "--isl", "256", "--osl", "64"});
  EXPECT_EQ(j["replicas"].get<long>(), 7);
  EXPECT_EQ(j["gpus"].get<long>(), 1);
}

// GPU memory is what nvidia-smi reports (81559 MiB on an H100 SXM, 79.6 GiB), not 80 x 10^9
// bytes (74.5 GiB): Llama 3.1 70B in fp8 then fits on one H100 with room for its KV cache, as
// vLLM runs it.
TEST(ServingMemory, Llama70bFp8FitsOneH100) {
  const auto t = gf::test::preset("dgx-h100");
  EXPECT_DOUBLE_EQ(t.gpu_spec().memory.value(), 81559.0 * 1024 * 1024);
  TrainingContext ctx(t);
  ReplicaSpec r = replica(1, WeightFormat::fp8);
  const InferenceCost c(ctx, library_model("llama3.1-70b"), r, {0});
  // 80 layers x 8 KV heads x 128 x K and V x 2 bytes = 320 KiB a token; at least a few
  // thousand tokens fit beside 67.7 GiB of weights.
  EXPECT_GT(c.kv_capacity_tokens(), 4000);
  const auto j = serve({"--preset", "dgx-h100", "--model", "llama3.1-70b", "--tp", "1", "--precision", "fp8",
                        "--offline", "16", "--isl", "512", "--osl", "64"});
  EXPECT_FALSE(j.empty());
}

// A MIG instance has the SMs `nvidia-smi mig -lgip` gives it: on H100 the 3g.40gb has 60 and the
// 4g.40gb 64 of 132 (not 3/7 and 4/7), on the same four memory slices, so a compute-bound
// prefill on the 4g instance is 64/60 as fast as on the 3g one, not 4/3.
TEST(ServingMig, SlicesHaveTheirLgipSms) {
  const auto t = gf::test::preset("dgx-h100");
  EXPECT_EQ(mig_profile(t.gpu_spec(), "3g.40gb").sms, 60);
  EXPECT_EQ(mig_profile(t.gpu_spec(), "4g.40gb").sms, 64);
  EXPECT_NEAR(mig_profile(t.gpu_spec(), "7g.80gb").memory_bytes, 79.25 * 1024 * 1024 * 1024, 1);
  TrainingContext ctx(t);
  const ModelSpec m = library_model("llama3.1-8b");
  ReplicaSpec three = replica(1);
  three.mig = "3g.40gb";
  ReplicaSpec four = replica(1);
  four.mig = "4g.40gb";
  InferenceCost c3(ctx, m, three, {0});
  InferenceCost c4(ctx, m, four, {0});
  IterationWork prefill;
  prefill.prefill_tokens = 8192;
  prefill.prefill_sequences = 1;
  const double ratio = c3.iteration(prefill).seconds / c4.iteration(prefill).seconds;
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 1.2);
  // Estimated profiles say so (H100 PCIe's beyond 1g have no public -lgip output).
  const auto pcie = gf::test::catalog().gpu("h100-pcie");
  EXPECT_FALSE(mig_profile(pcie, "1g.10gb").estimated);
  EXPECT_TRUE(mig_profile(pcie, "3g.40gb").estimated);
}
