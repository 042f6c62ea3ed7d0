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
  double output_tokens_per_s = 0;
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
  double overload_factor = 0;  // offered over served when overloaded
  // With SLOs: requests per second meeting both goals, and the fraction that did.
  double goodput_rps = 0;
  double slo_attainment = 0;
  bool meets_slo = false;  // the SLO percentile of TTFT and of TPOT within the goals
};

ServingSummary summarize(const ServingRun& run, double offered_rate, const SloSpec& slo, bool communication_is_tp);

}  // namespace gf::work
