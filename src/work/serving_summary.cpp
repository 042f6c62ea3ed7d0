#include "work/serving_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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
  double last_arrival = run.first_arrival_s;
  for (const auto& r : run.requests) {
    ttft.push_back(1e3 * r.ttft());
    if (r.output > 1) tpot.push_back(1e3 * r.tpot());
    e2e.push_back(1e3 * r.e2e());
    last_arrival = std::max(last_arrival, r.arrival_s);
  }
  s.ttft_ms = distribution(ttft);
  s.tpot_ms = distribution(tpot);
  s.e2e_ms = distribution(e2e);

  // The measurement window (serving_summary.hpp).
  double first_finish = run.last_finish_s;
  for (const auto& r : run.requests) first_finish = std::min(first_finish, r.finish_s);
  const bool open_load = !run.closed_loop && last_arrival > first_finish;
  const double from = open_load ? first_finish : run.first_arrival_s, to = open_load ? last_arrival : run.last_finish_s;
  s.window_s = to - from;
  const auto good = [&](const RequestRecord& r) {
    return (slo.ttft_s <= 0 || r.ttft() <= slo.ttft_s) && (slo.tpot_s <= 0 || r.tpot() <= slo.tpot_s);
  };
  const auto inside = [&](double t) { return t >= from && t <= to; };
  double out_tokens = 0, in_tokens = 0, completed = 0, good_completed = 0;
  for (const auto& r : run.requests) {
    if (inside(r.first_token_s)) {
      out_tokens += 1;
      in_tokens += static_cast<double>(r.input);
    }
    if (r.output > 1) {
      // The other tokens, spread evenly over (first token, last token].
      const double span = r.finish_s - r.first_token_s;
      const double overlap = std::max(0.0, std::min(to, r.finish_s) - std::max(from, r.first_token_s));
      out_tokens += static_cast<double>(r.output - 1) * (span > 0 ? overlap / span : (inside(r.finish_s) ? 1 : 0));
    }
    if (inside(r.finish_s)) {
      ++completed;
      if (good(r)) ++good_completed;
    }
  }
  if (s.duration_s > 0) {
    double all = 0;
    for (const auto& r : run.requests) all += static_cast<double>(r.output);
    s.run_output_tokens_per_s = all / s.duration_s;
  }
  if (s.window_s > 0) {
    s.output_tokens_per_s = out_tokens / s.window_s;
    s.input_tokens_per_s = in_tokens / s.window_s;
    s.requests_per_s = completed / s.window_s;
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

  // Overload (serving_summary.hpp): the requests in the system over the window's second half.
  s.offered_rate = offered_rate;
  const double arrivals_from = run.first_arrival_s, arrivals_span = last_arrival - run.first_arrival_s;
  if (offered_rate > 0 && !run.closed_loop && arrivals_span > 0) {
    double arrived = 0, early_queue = 0, early = 0, late_queue = 0, late = 0;
    for (const auto& r : run.requests) {
      const double at = (r.arrival_s - arrivals_from) / arrivals_span;
      if (at > 0.5) ++arrived;
      if (at > 0.4 && at <= 0.5) {
        early_queue += static_cast<double>(r.queue_seen);
        ++early;
      } else if (at > 0.9) {
        late_queue += static_cast<double>(r.queue_seen);
        ++late;
      }
    }
    const double growth = early > 0 && late > 0 ? late_queue / late - early_queue / early : 0;
    if (growth > std::max(2 * std::sqrt(arrived), 0.05 * arrived)) {
      s.overloaded = true;
      s.overload_factor = arrived / std::max(arrived - growth, 1.0);
    }
  }

  if (slo.any() && s.requests > 0) {
    s.slo_attainment = static_cast<double>(std::count_if(run.requests.begin(), run.requests.end(), good)) /
                       static_cast<double>(s.requests);
    s.goodput_rps = s.window_s > 0 ? good_completed / s.window_s : 0;
    const bool ttft_ok = slo.ttft_s <= 0 || percentile_sorted(ttft, slo.percentile) <= 1e3 * slo.ttft_s;
    const bool tpot_ok = slo.tpot_s <= 0 || tpot.empty() || percentile_sorted(tpot, slo.percentile) <= 1e3 * slo.tpot_s;
    s.meets_slo = ttft_ok && tpot_ok && !s.overloaded;
  }
  return s;
}

}  // namespace gf::work
