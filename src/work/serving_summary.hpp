#pragma once
// What a serving run means to the people who size fleets: throughput in tokens and requests per
// second, TTFT, TPOT and end-to-end latency percentiles, KV-cache occupancy, the batch reached,
// what bounds the engine, whether arrivals outpace service, and (with SLOs) the goodput.
#include <string>

#include "work/serving_sim.hpp"

namespace gf::work {

struct Distribution {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

// Latency goals; a request meets them when its TTFT and its TPOT are both within.
struct SloSpec {
  double ttft_s = 0;  // 0: none
  double tpot_s = 0;
  double percentile = 90;  // the percentile of requests that must meet each goal
  [[nodiscard]] bool any() const { return ttft_s > 0 || tpot_s > 0; }
};

struct ServingSummary {
  long requests = 0;
  double duration_s = 0;  // first arrival to last completion
  // Throughputs and goodput are taken over this window (see summarize()).
  double window_s = 0;
  double output_tokens_per_s = 0;
  // Output tokens over the whole run, first arrival to last completion, drain included: what a
  // client that times the run until every request returns reports (vLLM's benchmark_duration).
  double run_output_tokens_per_s = 0;
  double input_tokens_per_s = 0;
  double requests_per_s = 0;
  Distribution ttft_ms, tpot_ms, e2e_ms;
  double kv_peak = 0, kv_mean = 0;  // fractions of the KV cache
  long max_batch = 0;
  double mean_batch = 0;
  long preemptions = 0;
  long max_waiting = 0;
  double busy = 0;  // fraction of engine time spent in iterations
  double compute_share = 0, memory_share = 0, communication_share = 0;
  std::string bound;   // compute | memory bandwidth | KV capacity | max-seqs | TP communication
  std::string detail;  // one sentence on why
  bool overloaded = false;
  double offered_rate = 0;     // requests/s offered (Poisson), 0 otherwise
  double overload_factor = 0;  // offered over served (the second half of the window) when overloaded
  // With SLOs: requests per second meeting both goals, and the fraction that did.
  double goodput_rps = 0;
  double slo_attainment = 0;
  bool meets_slo = false;  // the SLO percentile of TTFT and of TPOT within the goals
};

// Throughput, input and output tokens per second and goodput are counted over a measurement
// window, as Perf Analyzer (which GenAI-Perf drives) counts "how many requests have completed
// during a window" and divides by its duration (docs/measurements_metrics.md, "Time Windows"):
// under an open load (Poisson, a trace) the window opens when the first request completes (the
// engines have filled: before, nothing can complete and the rate would read low) and closes with
// the last arrival, while the load is still offered, so the drain that follows (a queue emptying
// with nothing arriving) neither adds its completions nor dilutes the rate with its idle tail. Tokens count when they
// are emitted (a request's answer spread evenly from its first token to its last). Under a fixed concurrency and
// offline the window is the whole run, first arrival to last completion, as vLLM's benchmark client times it
// (vllm/benchmarks/serve.py: benchmark_duration runs until every request has returned) and as trtllm-bench and MLPerf's
// Offline scenario do.
//
// Overload (offered_rate > 0, an open load): arrivals outpace the service when the queue (requests
// waiting for admission) grows over the second half of the arrivals' span: the queue the arrivals of its last
// tenth find, against the queue those of the tenth before its middle found, rises by more than
// two standard deviations of the second half's arrivals' count and by more than 5% of them. A
// stable service holds its queue level however long a request takes (a long service time fills
// batches, not the queue); an overloaded one adds (offered - served) x time. The overload factor
// is the second half's arrivals over those the service took in (arrivals less the growth).
ServingSummary summarize(const ServingRun& run, double offered_rate, const SloSpec& slo, bool communication_is_tp);

}  // namespace gf::work
