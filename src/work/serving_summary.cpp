#include "work/serving_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace gf::work {

namespace {

// Sorts `v` (callers take further percentiles from it).
Distribution distribution(std::vector<double>& v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  d.p50 = percentile_sorted(v, 50);
  d.p90 = percentile_sorted(v, 90);
  d.p99 = percentile_sorted(v, 99);
  return d;
}

}  // namespace

ServingSummary summarize(const ServingRun& run, double offered_rate, const SloSpec& slo, bool communication_is_tp) {
  ServingSummary s;
  s.requests = static_cast<long>(run.requests.size());
  s.duration_s = run.makespan();
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(run.requests.size());
  tpot.reserve(run.requests.size());
  e2e.reserve(run.requests.size());
  double out_tokens = 0, in_tokens = 0;
  long good = 0;
  double last_arrival = 0;
  for (const auto& r : run.requests) {
    ttft.push_back(1e3 * r.ttft());
    if (r.output > 1) tpot.push_back(1e3 * r.tpot());
    e2e.push_back(1e3 * r.e2e());
    out_tokens += static_cast<double>(r.output);
    in_tokens += static_cast<double>(r.input);
    last_arrival = std::max(last_arrival, r.arrival_s);
    if ((slo.ttft_s <= 0 || r.ttft() <= slo.ttft_s) && (slo.tpot_s <= 0 || r.tpot() <= slo.tpot_s)) ++good;
  }
  s.ttft_ms = distribution(ttft);
  s.tpot_ms = distribution(tpot);
  s.e2e_ms = distribution(e2e);
  if (s.duration_s > 0) {
    s.output_tokens_per_s = out_tokens / s.duration_s;
    s.input_tokens_per_s = in_tokens / s.duration_s;
    s.requests_per_s = static_cast<double>(s.requests) / s.duration_s;
  }
  s.kv_peak = run.kv_peak;
  s.kv_mean = run.kv_mean;
  s.max_batch = run.max_batch;
  s.mean_batch = run.mean_batch;
  s.preemptions = run.preemptions;
  s.max_waiting = run.max_waiting;
  if (s.duration_s > 0 && run.engines > 0) s.busy = run.busy_s / (s.duration_s * run.engines);
  if (run.busy_s > 0) {
    s.compute_share = run.compute_s / run.busy_s;
    s.memory_share = run.memory_s / run.busy_s;
    s.communication_share = run.communication_s / run.busy_s;
  }

  // What bounds the engine: KV capacity when it turned requests away or preempted them for a
  // quarter of the busy time; the sequence limit likewise; else what the iterations spent most on.
  const double busy = std::max(run.busy_s, 1e-30);
  if (run.kv_blocked_s > 0.25 * busy || run.preemptions > s.requests / 20) {
    s.bound = "KV capacity";
    s.detail = fmt::format("requests waited for KV blocks in {:.0f}% of the busy time; {} preemptions",
                           100 * run.kv_blocked_s / busy, run.preemptions);
  } else if (run.seqs_blocked_s > 0.25 * busy) {
    s.bound = "max-seqs";
    s.detail = fmt::format("requests waited for a sequence slot (--max-seqs) in {:.0f}% of the busy time",
                           100 * run.seqs_blocked_s / busy);
  } else if (s.communication_share >= s.compute_share && s.communication_share >= s.memory_share) {
    s.bound = communication_is_tp ? "TP communication" : "communication";
  } else {
    s.bound = s.compute_share >= s.memory_share ? "compute" : "memory bandwidth";
  }
  if (s.detail.empty())
    s.detail = fmt::format(
        "iterations spend {:.0f}% on FLOP-bound kernels, {:.0f}% on HBM-bound kernels, {:.0f}% "
        "communicating",
        100 * s.compute_share, 100 * s.memory_share, 100 * s.communication_share);
  s.detail += fmt::format("; the engines are busy {:.0f}% of the time", 100 * std::min(1.0, s.busy));

  // Overload: under Poisson arrivals, the queue grows when service is slower than arrivals; the
  // sign is a drain (last arrival to last completion) long against the arrival span.
  s.offered_rate = offered_rate;
  if (offered_rate > 0 && s.requests > 1) {
    const double span = last_arrival - run.first_arrival_s;
    const double drain = run.last_finish_s - last_arrival;
    const double served = static_cast<double>(s.requests) / std::max(1e-12, s.duration_s);
    if (span > 0 && drain > 0.2 * span && served < 0.95 * offered_rate) {
      s.overloaded = true;
      s.overload_factor = offered_rate / served;
    }
  }
  if (slo.any() && s.requests > 0) {
    s.slo_attainment = static_cast<double>(good) / static_cast<double>(s.requests);
    s.goodput_rps = s.duration_s > 0 ? static_cast<double>(good) / s.duration_s : 0;
    const bool ttft_ok = slo.ttft_s <= 0 || percentile_sorted(ttft, slo.percentile) <= 1e3 * slo.ttft_s;
    const bool tpot_ok = slo.tpot_s <= 0 || tpot.empty() || percentile_sorted(tpot, slo.percentile) <= 1e3 * slo.tpot_s;
    s.meets_slo = ttft_ok && tpot_ok && !s.overloaded;
  }
  return s;
}

}  // namespace gf::work
