#include "sched/sharing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.hpp"
#include "work/mig_profile.hpp"

namespace gf::sched {

namespace {

// CUDA time-slicing: the length of a slice and the cost of switching contexts are not published
// for compute contexts. NVIDIA's time-sliced vGPU schedules 480 or 960 slices a second (about
// 2 ms at the lower rate, research/scheduling.md 1.5); ASSUMPTION: 50 us to save and restore a
// context at each switch (compute preemption), so 2.5% of every slice is lost while replicas
// contend.
constexpr double kTimeslice_s = 1.0 / 480;
constexpr double kContextSwitch_s = 50e-6;
constexpr double kSwitchOverhead = kContextSwitch_s / kTimeslice_s;

// One replica serving Poisson arrivals at `rate`, its iterations all `stretch` times longer than
// the cost model says. A run whose every service time is stretched by s is the run at s times
// the rate, with every time stretched by s (the simulation is event-driven, without clocks of
// its own), so the stretched run is the plain run at rate x s, rescaled.
work::ServingSummary run_stretched(work::InferenceCost& cost, const SharingRequest& q, double stretch) {
  work::LoadSpec l;
  l.kind = work::ArrivalKind::poisson;
  l.rate = q.rate * stretch;
  l.requests = q.requests;
  l.input = q.input;
  l.output = q.output;
  l.seed = q.seed;
  const work::ServingRun run = work::simulate_serving({&cost}, work::generate_requests(l), 0, q.simulation);
  work::SloSpec slo = q.slo;
  slo.ttft_s /= stretch;
  slo.tpot_s /= stretch;
  work::ServingSummary s = work::summarize(run, l.rate, slo, true);
  for (work::Distribution* d : {&s.ttft_ms, &s.tpot_ms, &s.e2e_ms}) {
    d->mean *= stretch;
    d->p50 *= stretch;
    d->p90 *= stretch;
    d->p99 *= stretch;
  }
  s.duration_s *= stretch;
  for (double* v : {&s.output_tokens_per_s, &s.input_tokens_per_s, &s.requests_per_s, &s.goodput_rps}) *v /= stretch;
  s.offered_rate = q.rate;
  return s;
}

// A replica with 1/k of the memory budget (vLLM's --gpu-memory-utilization split k ways, as
// several engines on one GPU are run; MPS enforces it, time-slicing only relies on it), or
// null with the reason when the model and a full-length request do not fit.
std::unique_ptr<work::InferenceCost> share_of(work::TrainingContext& ctx, const SharingRequest& q, long k,
                                              std::string* why) {
  work::ReplicaSpec r = q.replica;
  r.gpu_memory_utilization = q.replica.gpu_memory_utilization / static_cast<double>(k);
  try {
    auto c = std::make_unique<work::InferenceCost>(ctx, q.model, r, std::vector<long>{0});
    if (c->kv_capacity_tokens() < q.input.max() + q.output.max()) {
      if (why != nullptr)
        *why = fmt::format("{} replicas leave {} KV tokens each, less than one request's {}", k,
                           c->kv_capacity_tokens(), q.input.max() + q.output.max());
      return nullptr;
    }
    return c;
  } catch (const InputError& e) {
    if (why != nullptr) *why = e.problem();
    return nullptr;
  }
}

long most_that_fit(work::TrainingContext& ctx, const SharingRequest& q, long limit) {
  long lo = 0, hi = limit;  // fits(lo) (0 trivially); find the largest
  while (lo < hi) {
    const long mid = (lo + hi + 1) / 2;
    if (share_of(ctx, q, mid, nullptr))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// How much longer an iteration takes when k replicas share the GPU, each busy `busy` of the
// time alone (its share of time in iterations at its rate, from the whole-GPU run). The others
// are in an iteration with probability min(1, busy x stretch): a mean-field estimate, solved by
// iteration (the stretch grows with the others' busy time, which grows with the stretch).
template <typename Stretch>
double contended(long k, double busy, Stretch f) {
  double s = 1;
  for (int i = 0; i < 100; ++i) {
    const double others = static_cast<double>(k - 1) * std::min(1.0, busy * s);
    const double next = f(1 + others);
    if (std::abs(next - s) < 1e-9) return next;
    s = next;
  }
  return s;
}

ModeResult finish(ModeResult m, const work::ServingSummary& whole) {
  m.isolation = isolation_of(m.mode);
  m.throughput_rps = m.per_replica.requests_per_s * static_cast<double>(m.replicas);
  m.output_tokens_per_s = m.per_replica.output_tokens_per_s * static_cast<double>(m.replicas);
  m.slowdown = whole.e2e_ms.mean > 0 ? m.per_replica.e2e_ms.mean / whole.e2e_ms.mean : 0;
  return m;
}

// The MIG profiles with at least k instances on the GPU, the largest first (compute, then memory):
// the first that holds the model serves.
std::vector<work::MigProfile> mig_candidates(const hw::GpuSpec& gpu, long k) {
  std::vector<work::MigProfile> out;
  for (const std::string& name : work::mig_profile_names(gpu)) {
    const work::MigProfile p = work::mig_profile(gpu, name);
    if (p.max_instances >= k) out.push_back(p);
  }
  std::stable_sort(out.begin(), out.end(), [](const work::MigProfile& a, const work::MigProfile& b) {
    return a.sms != b.sms ? a.sms > b.sms : a.memory_bytes > b.memory_bytes;
  });
  return out;
}

}  // namespace

const char* to_string(SharingMode m) {
  switch (m) {
    case SharingMode::whole: return "whole GPU";
    case SharingMode::time_slicing: return "time-slicing";
    case SharingMode::mps: return "MPS";
    case SharingMode::mig: return "MIG";
    case SharingMode::kCount: break;
  }
  return "?";
}

Isolation isolation_of(SharingMode m) {
  switch (m) {
    case SharingMode::whole:
    case SharingMode::mig: return {true, true, true, true};
    // MIG guide: MPS has memory protection and SM isolation "by percentage", no bandwidth QoS,
    // no error isolation.
    case SharingMode::mps: return {true, true, false, false};
    case SharingMode::time_slicing:
    case SharingMode::kCount: break;
  }
  return {};
}

SharingReport compare_sharing(work::TrainingContext& ctx, const SharingRequest& q) {
  if (q.jobs < 1 || q.jobs > kMaxClients)
    throw InputError({}, "jobs", fmt::format("{} replicas per GPU", q.jobs), fmt::format("1 to {}", kMaxClients));
  if (q.replica.gpus() != 1 || q.replica.ep != 1 || !q.replica.mig.empty())
    throw InputError({}, "tp", fmt::format("TP {} x PP {}", q.replica.tp, q.replica.pp),
                     "TP 1 and PP 1: a shared replica runs on one GPU (the MIG profile goes in `mig`)");
  if (!(q.rate > 0)) throw InputError({}, "rate", fmt::format("{}", q.rate), "a positive request rate per replica");
  const hw::GpuSpec& gpu = ctx.topology().gpu_spec();
  const long k = q.jobs;
  SharingReport out;
  out.model = q.model.name;
  out.gpu = gpu.name;
  out.jobs = k;
  out.rate = q.rate;
  out.slo = q.slo;

  std::string why;
  auto whole_cost = share_of(ctx, q, 1, &why);
  if (!whole_cost)
    throw InputError({}, "model", fmt::format("{} does not fit one {}: {}", q.model.name, gpu.name, why),
                     "a smaller model or weight format");
  ModeResult whole;
  whole.mode = SharingMode::whole;
  whole.detail = "one replica, no sharing";
  whole.fits = true;
  whole.replicas_fit = whole.replicas = 1;
  whole.per_replica = run_stretched(*whole_cost, q, 1);
  const work::ServingSummary base = whole.per_replica;
  out.modes.push_back(finish(whole, base));
  const double busy = base.busy, c = base.compute_share, m = base.memory_share, x = base.communication_share;

  // Time-slicing and MPS: k engines each with 1/k of the memory budget.
  auto shared = [&](SharingMode mode, double stretch, std::string detail) {
    ModeResult r;
    r.mode = mode;
    r.detail = std::move(detail);
    r.replicas_fit = most_that_fit(ctx, q, kMaxClients);
    auto cost = share_of(ctx, q, k, &r.why_not);
    r.fits = cost != nullptr;
    r.replicas = std::min(k, r.replicas_fit);
    r.stretch = stretch;
    if (cost) r.per_replica = run_stretched(*cost, q, stretch);
    out.modes.push_back(finish(r, base));
  };
  // Time-slicing: each busy replica has the whole GPU one slice in n (n replicas in iterations),
  // and loses the switch at every slice.
  const double ts = contended(k, busy, [&](double n) { return n > 1 ? n * (1 + kSwitchOverhead) : 1.0; });
  shared(SharingMode::time_slicing, ts, fmt::format("{} replicas take turns, {:.1f} ms slices", k, 1e3 * kTimeslice_s));
  // MPS (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 100/k, as the device plugin sets it): a replica's
  // compute-bound kernels run on 1/k of the SMs whether or not the others are busy; memory-bound
  // ones share HBM with the busy others, and run beside their compute-bound ones. The iteration
  // takes the longer of its own work at its SM cap and its share of the busy replicas' HBM and
  // SM time together.
  const double mps =
      contended(k, busy, [&](double n) { return std::max(static_cast<double>(k) * c + m, n * std::max(c, m)) + x; });
  shared(SharingMode::mps, mps, fmt::format("{:.0f}% of the SMs each", 100.0 / static_cast<double>(k)));

  // MIG: the serving model's own MIG path (its slice of SMs, bandwidth and memory).
  ModeResult g;
  g.mode = SharingMode::mig;
  std::vector<work::MigProfile> profiles;
  if (!q.mig.empty())
    profiles.push_back(work::mig_profile(gpu, q.mig, "mig"));
  else
    profiles = mig_candidates(gpu, k);
  if (profiles.empty())
    g.why_not = work::mig_profile_names(gpu).empty()
                    ? fmt::format("the {} has no MIG", gpu.name)
                    : fmt::format("no MIG profile of the {} has {} instances", gpu.name, k);
  for (const work::MigProfile& p : profiles) {
    g.detail = fmt::format("{} ({} SMs, {:.2f} GiB)", p.name, p.sms, p.memory_bytes / (1024.0 * 1024 * 1024));
    work::ReplicaSpec r = q.replica;
    r.mig = p.name;
    r.per_gpu = p.max_instances;
    try {
      work::InferenceCost cost(ctx, q.model, r, {0});
      if (cost.kv_capacity_tokens() < q.input.max() + q.output.max()) {
        g.why_not = fmt::format("{} KV tokens, less than one request's {}", cost.kv_capacity_tokens(),
                                q.input.max() + q.output.max());
        continue;
      }
      g.why_not.clear();
      g.replicas_fit = p.max_instances;
      g.replicas = std::min(k, g.replicas_fit);
      g.fits = g.replicas_fit >= k;
      if (!g.fits) g.why_not = fmt::format("{} holds {} instances", p.name, p.max_instances);
      g.per_replica = run_stretched(cost, q, 1);
      break;
    } catch (const InputError& e) {
      g.why_not = e.problem();
    }
  }
  if (profiles.size() > 1 && !g.fits) g.detail = fmt::format("no profile with {} instances holds the model", k);
  out.modes.push_back(finish(g, base));
  out.assumptions.push_back(fmt::format(
      "time-slicing: {:.1f} ms slices (NVIDIA vGPU's 480 a second) and a {:.0f} us context switch (ASSUMPTION), "
      "{:.1f}% lost while replicas contend",
      1e3 * kTimeslice_s, 1e6 * kContextSwitch_s, 100 * kSwitchOverhead));
  out.assumptions.push_back(fmt::format(
      "contention from the whole-GPU run at {:g} req/s: busy {:.0f}% of the time, {:.0f}% compute-bound, {:.0f}% "
      "memory-bound; the others are busy as often, stretched (mean field)",
      q.rate, 100 * busy, 100 * c, 100 * m));
  out.assumptions.push_back(
      "time-slicing and MPS replicas each hold 1/k of the memory budget (the device plugin's MPS limit; "
      "time-slicing enforces none)");
  return out;
}

namespace {

std::string yes(bool b) { return b ? "yes" : "no"; }

}  // namespace

std::string sharing_text(const SharingReport& r) {
  std::string out = fmt::format("# {} replicas of {} sharing one {}, {:g} req/s each", r.jobs, r.model, r.gpu, r.rate);
  if (r.slo.any())
    out += fmt::format("; goals TTFT {:.0f} ms, TPOT {:.0f} ms at p{:.0f}", 1e3 * r.slo.ttft_s, 1e3 * r.slo.tpot_s,
                       r.slo.percentile);
  out += "\n";
  out += fmt::format("{:<13} {:>4} {:>4} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  {:<4} {:<4} {:<4} {:<5}  {}\n",
                     "mode", "fit", "run", "stretch", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "req/s", "slower",
                     "mem", "SM", "BW", "fault", "detail");
  for (const ModeResult& m : r.modes) {
    const auto& s = m.per_replica;
    const bool ran = s.requests > 0;
    auto ms = [&](double v) { return ran ? fmt::format("{:.1f}", v) : std::string("-"); };
    out += fmt::format("{:<13} {:>4} {:>4} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}  {:<4} {:<4} {:<4} {:<5}  {}\n",
                       to_string(m.mode), m.replicas_fit, m.replicas, fmt::format("x{:.2f}", m.stretch),
                       ms(s.ttft_ms.p50), ms(s.ttft_ms.p99), ms(s.tpot_ms.p50), ms(s.tpot_ms.p99),
                       ran ? fmt::format("{:.2f}", m.throughput_rps) : "-",
                       ran ? fmt::format("x{:.2f}", m.slowdown) : "-", yes(m.isolation.memory_protection),
                       yes(m.isolation.sm_isolation), yes(m.isolation.bandwidth_qos), yes(m.isolation.fault_isolation),
                       m.fits || m.mode == SharingMode::whole
                           ? m.detail
                           : m.detail + (m.detail.empty() ? "" : "; ") + "does not fit: " + m.why_not);
  }
  out += "  req/s: all replicas together; slower: mean end-to-end latency over the whole GPU's at the same rate\n";
  out +=
      "  isolation (NVIDIA MIG User Guide; k8s-device-plugin for time-slicing): mem = memory protection, SM = SM "
      "isolation, BW = memory-bandwidth QoS, fault = error isolation\n";
  for (const auto& a : r.assumptions) out += "  assumption: " + a + "\n";
  return out;
}

nlohmann::json sharing_json(const SharingReport& r) {
  auto dist = [](const work::Distribution& d) {
    return nlohmann::json{{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}};
  };
  nlohmann::json j{{"model", r.model}, {"gpu", r.gpu}, {"jobs", r.jobs}, {"rate_per_replica", r.rate}};
  j["slo"] = {{"ttft_ms", 1e3 * r.slo.ttft_s}, {"tpot_ms", 1e3 * r.slo.tpot_s}, {"percentile", r.slo.percentile}};
  j["modes"] = nlohmann::json::array();
  for (const ModeResult& m : r.modes) {
    nlohmann::json x{{"mode", to_string(m.mode)},
                     {"detail", m.detail},
                     {"fits", m.fits},
                     {"replicas_fit", m.replicas_fit},
                     {"replicas", m.replicas},
                     {"stretch", m.stretch},
                     {"throughput_rps", m.throughput_rps},
                     {"output_tokens_per_s", m.output_tokens_per_s},
                     {"slowdown", m.slowdown},
                     {"isolation",
                      {{"memory_protection", m.isolation.memory_protection},
                       {"sm_isolation", m.isolation.sm_isolation},
                       {"bandwidth_qos", m.isolation.bandwidth_qos},
                       {"fault_isolation", m.isolation.fault_isolation}}}};
    if (!m.why_not.empty()) x["why_not"] = m.why_not;
    if (m.per_replica.requests > 0) {
      x["ttft_ms"] = dist(m.per_replica.ttft_ms);
      x["tpot_ms"] = dist(m.per_replica.tpot_ms);
      x["e2e_ms"] = dist(m.per_replica.e2e_ms);
      x["requests_per_s_per_replica"] = m.per_replica.requests_per_s;
      x["overloaded"] = m.per_replica.overloaded;
      if (r.slo.any()) x["slo_attainment"] = m.per_replica.slo_attainment;
    }
    j["modes"].push_back(x);
  }
  j["assumptions"] = r.assumptions;
  return j;
}

}  // namespace gf::sched
