#include "sched/autoscale.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/yaml_fields.hpp"
#include "hw/catalog.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "work/mig_profile.hpp"
#include "work/model_library.hpp"
#include "work/serving_fleet.hpp"

namespace gf::sched {

const char* to_string(HpaMetric m) { return name_of(kHpaMetricNames, m); }

// ---------------------------------------------------------------------------------------------
// The service file.

namespace {

double non_negative(const Fields& f, const char* key, double fallback, double max) {
  if (!f.has(key)) return fallback;
  const double v = f.number(key);
  if (v < 0 || v > max) f.fail(key, fmt::format("got {}", v), fmt::format("0 to {:g}", max));
  return v;
}

void read_replica(const Fields& f, ServiceSpec& s) {
  s.replica.tp = f.integer_or("tp", 1, 1024, 1);
  s.replica.pp = f.integer_or("pp", 1, 1024, 1);
  const std::string p = f.has("precision") ? f.choice("precision", names(work::kWeightFormatNames)) : "bf16";
  s.replica.weights = *parse_name(work::kWeightFormatNames, p);
  const std::string kv =
      f.has("kv_dtype") ? f.choice("kv_dtype", {"fp16", "bf16", "fp8"}) : (p == "fp16" ? "fp16" : "bf16");
  work::parse_weight_format(kv, s.replica.kv);
  if (f.has("gpu_memory_utilization")) {
    s.replica.gpu_memory_utilization = f.fraction("gpu_memory_utilization");
    if (s.replica.gpu_memory_utilization < 0.05) f.fail("gpu_memory_utilization", "below 0.05", "0.05 to 1");
  }
  s.replica.max_batch_tokens = f.integer_or("max_batch_tokens", 1, 1L << 22, s.replica.max_batch_tokens);
  s.replica.max_seqs = f.integer_or("max_seqs", 1, 1L << 20, s.replica.max_seqs);
  if (f.has("mig")) {
    s.replica.mig = f.text("mig");
    if (s.replica.gpus() != 1) f.fail("mig", "a MIG instance with TP or PP above 1", "tp: 1 and pp: 1 with mig");
  }
}

void read_cluster(const Fields& f, ServiceSpec& s) {
  s.preset = f.text("preset");
  const auto names = topo::preset_names();
  if (std::find(names.begin(), names.end(), s.preset) == names.end()) {
    const std::string near = suggest(s.preset, names);
    f.fail("preset", "no preset '" + s.preset + "'" + (near.empty() ? "" : "; did you mean '" + near + "'?"),
           join(names));
  }
  if (f.has("nodes") == f.has("gpus"))
    f.fail("nodes", "give exactly one of nodes and gpus", "nodes: N (of the preset), or gpus: N (whole nodes)");
  if (f.has("nodes")) s.nodes = f.integer("nodes", 1, 10000);
  if (f.has("gpus")) s.gpus = f.integer("gpus", 1, topo::kMaxGpus);
}

void read_hpa(const Fields& f, ServiceSpec& s) {
  HpaSpec& h = s.hpa;
  h.metric = f.choice("metric", kHpaMetricNames);
  h.target = f.positive("target");
  if (h.metric == HpaMetric::utilization && h.target > 100) f.fail("target", "over 100%", "a utilisation % up to 100");
  if (h.target > 1e6) f.fail("target", "absurdly large", "a target a replica can reach");
  h.tolerance = non_negative(f, "tolerance", h.tolerance, 0.99);
  h.sync_period_s = f.positive_or("sync_period_s", h.sync_period_s);
  if (h.sync_period_s < 1 || h.sync_period_s > 3600) f.fail("sync_period_s", "outside 1 s .. 1 h", "e.g. 15");
  h.scale_up_stabilization_s = non_negative(f, "scale_up_stabilization_s", h.scale_up_stabilization_s, 3600);
  h.scale_down_stabilization_s = non_negative(f, "scale_down_stabilization_s", h.scale_down_stabilization_s, 3600);
  h.min_replicas = f.integer_or("min_replicas", 1, 1L << 20, h.min_replicas);
  h.max_replicas = f.integer_or("max_replicas", 1, 1L << 20, 0);
  if (h.max_replicas > 0 && h.max_replicas < h.min_replicas)
    f.fail("max_replicas", fmt::format("{} is below min_replicas {}", h.max_replicas, h.min_replicas),
           "at least min_replicas");
}

}  // namespace

ServiceSpec parse_service(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  if (!root.IsMap())
    throw InputError({file, 1, 1}, "service", "not a mapping", "a service file (docs/autoscale-format.md)");
  const Fields f(
      root, file, "",
      {"name", "description", "model", "replica", "cluster", "lengths", "slo", "hpa", "startup", "training", "seed"});
  ServiceSpec s;
  s.file = file;
  s.where = f.where();
  s.name = f.text("name");
  s.model = f.text("model");
  try {
    (void)work::library_model(s.model, f.field("model"));
  } catch (const InputError& e) {
    throw InputError(f.where("model"), f.field("model"), e.problem(), e.valid());
  }
  if (f.has("replica"))
    read_replica(
        Fields(f.node("replica"), file, "replica",
               {"tp", "pp", "precision", "kv_dtype", "mig", "gpu_memory_utilization", "max_batch_tokens", "max_seqs"}),
        s);
  read_cluster(Fields(f.node("cluster"), file, "cluster", {"preset", "nodes", "gpus"}), s);
  if (f.has("lengths")) {
    const Fields l(f.node("lengths"), file, "lengths", {"input", "output"});
    s.input = work::LengthDistribution(l.integer_or("input", 1, 1L << 20, 1024));
    s.output = work::LengthDistribution(l.integer_or("output", 1, 1L << 20, 256));
  }
  {
    const Fields l(f.node("slo"), file, "slo", {"ttft_ms", "tpot_ms", "percentile"});
    if (l.has("ttft_ms")) s.slo.ttft_s = l.physical("ttft_ms", 1e-3, physical::latency);
    if (l.has("tpot_ms")) s.slo.tpot_s = l.physical("tpot_ms", 1e-3, physical::latency);
    if (!s.slo.any()) l.fail("ttft_ms", "no latency goal", "ttft_ms, tpot_ms or both");
    if (l.has("percentile")) {
      s.slo.percentile = l.positive("percentile");
      if (s.slo.percentile > 100) l.fail("percentile", "over 100", "a percentile from 1 to 100");
    }
  }
  read_hpa(Fields(f.node("hpa"), file, "hpa",
                  {"metric", "target", "tolerance", "sync_period_s", "scale_up_stabilization_s",
                   "scale_down_stabilization_s", "min_replicas", "max_replicas"}),
           s);
  if (f.has("startup")) {
    const Fields u(f.node("startup"), file, "startup", {"node_start_s", "pod_start_s", "storage", "storage_read_GBps"});
    s.startup.node_start_s = non_negative(u, "node_start_s", s.startup.node_start_s, 86400);
    s.startup.pod_start_s = non_negative(u, "pod_start_s", s.startup.pod_start_s, 86400);
    if (u.has("storage")) {
      s.startup.storage = u.text("storage");
      const hw::Catalog catalog = hw::Catalog::builtin();
      (void)catalog.storage(s.startup.storage, u.where("storage"), u.field("storage"));
    }
    if (u.has("storage_read_GBps"))
      s.startup.storage_read_Bps = u.physical("storage_read_GBps", 1e9, physical::bandwidth);
  }
  if (f.has("training")) {
    const Fields t(f.node("training"), file, "training", {"enabled", "job_gpus", "checkpoint_s", "restart_s"});
    s.training.enabled = t.flag_or("enabled", true);
    s.training.job_gpus = t.integer_or("job_gpus", 1, 1L << 20, 0);
    s.training.checkpoint_s = non_negative(t, "checkpoint_s", s.training.checkpoint_s, 86400);
    s.training.restart_s = non_negative(t, "restart_s", s.training.restart_s, 86400);
  }
  s.seed = static_cast<std::uint64_t>(f.integer_or("seed", 0, 1L << 62, 0));
  return s;
}

ServiceSpec load_service(const std::string& path) { return parse_service(read_text_file(path, "--autoscale"), path); }

// ---------------------------------------------------------------------------------------------
// The replica, priced once.

LoadPointModel ServiceModel::at(double load) const {
  if (curve.empty()) return {};
  if (load <= curve.front().load) {
    const double f = curve.front().load > 0 ? std::max(0.0, load) / curve.front().load : 1;
    LoadPointModel p = curve.front();
    p.load = load;
    p.busy *= f;
    p.in_flight *= f;
    return p;
  }
  std::size_t i = 1;
  while (i + 1 < curve.size() && curve[i].load < load) ++i;
  const LoadPointModel& a = curve[i - 1];
  const LoadPointModel& b = curve[i];
  const double w = (load - a.load) / (b.load - a.load);  // > 1 past the last point: extended
  auto mix = [&](double x, double y) { return std::max(0.0, x + (y - x) * w); };
  return {load, mix(a.ttft_ms, b.ttft_ms), mix(a.tpot_ms, b.tpot_ms), std::min(1.0, mix(a.busy, b.busy)),
          mix(a.in_flight, b.in_flight)};
}

namespace {

double at_percentile(const work::Distribution& d, double p) { return p >= 99 ? d.p99 : p >= 90 ? d.p90 : d.p50; }

}  // namespace

ServiceModel model_service(const ServiceSpec& s, const AutoscaleOptions& o) {
  const hw::Catalog catalog = hw::Catalog::builtin();
  topo::ClusterSpec spec = topo::load_preset(s.preset, catalog);
  topo::ClusterOverrides single;
  single.nodes = 1;
  topo::apply_overrides(spec, single, catalog);
  auto t = std::make_unique<topo::Topology>(spec, catalog);
  const long per_node = t->gpus_per_node();
  if (s.replica.gpus() > per_node) {
    // A replica across nodes: price it on as many nodes as it spans.
    topo::ClusterOverrides more;
    more.nodes = (s.replica.gpus() + per_node - 1) / per_node;
    topo::apply_overrides(spec, more, catalog);
    t = std::make_unique<topo::Topology>(spec, catalog);
  }
  ServiceModel m;
  m.gpu = t->gpu_spec().name;
  m.gpus_per_node = per_node;
  const long nodes = s.nodes > 0 ? s.nodes : (s.gpus + per_node - 1) / per_node;
  m.cluster_gpus = nodes * per_node;
  work::ReplicaSpec r = s.replica;
  if (!r.mig.empty()) {
    try {
      r.per_gpu = work::mig_profile(t->gpu_spec(), r.mig, "replica.mig").max_instances;
    } catch (const InputError& e) {
      throw InputError(s.where, "replica.mig", e.problem(), e.valid());
    }
  }
  m.replica_gpus = r.gpus();
  m.per_gpu = r.per_gpu;
  if (m.replica_gpus > m.cluster_gpus)
    throw InputError(s.where, "cluster", fmt::format("{} GPUs; a replica needs {}", m.cluster_gpus, m.replica_gpus),
                     "more nodes or GPUs");
  const work::ModelSpec model = work::library_model(s.model);
  work::TrainingContext ctx(*t);
  work::SizingOptions so;
  so.requests = o.requests;
  so.simulation.scheduler.max_batch_tokens = r.max_batch_tokens;
  so.simulation.scheduler.max_seqs = r.max_seqs;
  work::LoadSpec load;
  load.input = s.input;
  load.output = s.output;
  load.seed = s.seed;
  load.requests = o.requests;
  // Only the rate one replica serves within the goals matters here; a token rate keeps the
  // fleet check to one replica.
  const work::FleetSizing f = work::size_fleet(ctx, model, {r}, load, 1e-3, s.slo, so);
  const work::LayoutSizing& l = f.layouts.front();
  if (!l.fits || !(l.replica_rate > 0))
    throw InputError(s.where, "slo",
                     fmt::format("a replica of {} on the {} cannot meet the goals: {}", s.model, m.gpu, l.why_not),
                     "looser goals, another layout or a faster GPU");
  m.replica_rate = l.replica_rate;
  const work::ReplicaSet one(ctx, model, r, 1, {}, s.input.mean());
  m.weight_bytes = one.first().weight_bytes_per_gpu() * static_cast<double>(r.gpus());
  if (s.startup.storage_read_Bps > 0) {
    m.storage_read_Bps = s.startup.storage_read_Bps;
    m.storage_source = "the service file's storage_read_GBps";
  } else {
    const hw::StorageSpec& st = catalog.storage(s.startup.storage);
    m.storage_read_Bps = st.read.value();
    m.storage_source = fmt::format("{} read {:.2f} GB/s ({})", st.name, st.read.value() / 1e9, st.source);
  }
  // Latency and busy time against load, for the HPA's metrics between sync periods.
  for (const double x : {0.1, 0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25}) {
    work::LoadSpec l2 = load;
    l2.kind = work::ArrivalKind::poisson;
    l2.rate = x * m.replica_rate;
    const work::ServingRun run = one.run(work::generate_requests(l2), 0, so.simulation);
    const work::ServingSummary sum = work::summarize(run, l2.rate, s.slo, true);
    m.curve.push_back({x, at_percentile(sum.ttft_ms, s.slo.percentile), at_percentile(sum.tpot_ms, s.slo.percentile),
                       sum.busy, l2.rate * sum.e2e_ms.mean / 1e3});
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// The simulation.

namespace {

struct Recommendation {
  double time_s;
  long replicas;
};

class Cluster {
public:
  Cluster(const ServiceModel& m, long job_gpus) : m_(m), job_gpus_(job_gpus) {}
  // GPUs `replicas` replicas hold (MIG instances share GPUs).
  [[nodiscard]] long service_gpus(long replicas) const {
    return (replicas * m_.replica_gpus + m_.per_gpu - 1) / m_.per_gpu;
  }
  [[nodiscard]] long free_gpus(long replicas, long jobs) const {
    return m_.cluster_gpus - service_gpus(replicas) - jobs * job_gpus_;
  }
  [[nodiscard]] long capacity() const { return m_.cluster_gpus / m_.replica_gpus * m_.per_gpu; }

private:
  const ServiceModel& m_;
  long job_gpus_;
};

}  // namespace

AutoscaleResult simulate_autoscale(const ServiceSpec& s, const LoadCurve& curve, const ServiceModel& m) {
  const HpaSpec& h = s.hpa;
  AutoscaleResult out;
  out.service = s.name;
  out.model = s.model;
  out.gpu = m.gpu;
  out.curve = curve.name();
  out.cluster_gpus = m.cluster_gpus;
  out.replica_rate = m.replica_rate;
  out.latency_curve = m.curve;
  out.load_s = m.weight_bytes / m.storage_read_Bps;
  out.scale_up_delay_s = s.startup.node_start_s + s.startup.pod_start_s + out.load_s;
  out.duration_s = curve.duration_s();
  out.peak_rate = curve.peak();
  const long job_gpus = s.training.job_gpus > 0 ? s.training.job_gpus : m.gpus_per_node;
  const Cluster c(m, job_gpus);
  const long most = h.max_replicas > 0 ? std::min(h.max_replicas, c.capacity()) : c.capacity();
  const long least = std::min(h.min_replicas, most);
  if (h.max_replicas > c.capacity())
    out.notes.push_back(fmt::format("max_replicas {} is more than the cluster's {} GPUs hold ({})", h.max_replicas,
                                    m.cluster_gpus, c.capacity()));

  // The service has been running: it starts with the replicas its first rate needs.
  long ready = std::clamp<long>(static_cast<long>(std::ceil(curve.rate_at(0) / m.replica_rate)), least, most);
  std::vector<double> starting;  // ready times of replicas on their way
  long jobs = 0, job_starts = 0;
  auto start_jobs = [&] {
    if (!s.training.enabled) return;
    while (c.free_gpus(ready + static_cast<long>(starting.size()), jobs) >= job_gpus) {
      ++jobs;
      ++job_starts;
    }
  };
  start_jobs();
  std::deque<Recommendation> history;
  const double dt = h.sync_period_s;
  const double window = std::max(h.scale_up_stabilization_s, h.scale_down_stabilization_s);
  for (double t = 0; t < out.duration_s - 1e-9; t += dt) {
    const double step = std::min(dt, out.duration_s - t);
    // Replicas whose start finished.
    std::erase_if(starting, [&](double when) {
      if (when > t + 1e-9) return false;
      ++ready;
      return true;
    });
    AutoscaleStep row;
    row.time_s = t;
    const double requests = curve.requests_between(t, t + step);
    row.offered_rps = requests / step;
    row.capacity_rps = static_cast<double>(ready) * m.replica_rate;
    row.missed = std::max(0.0, requests - row.capacity_rps * step);
    // The metric the HPA sees, averaged over ready replicas.
    const long current = ready + static_cast<long>(starting.size());
    long recommended = current;
    if (ready > 0) {
      const LoadPointModel p = m.at(row.offered_rps / row.capacity_rps);
      row.ttft_ms = p.ttft_ms;
      row.metric = h.metric == HpaMetric::utilization ? 100 * p.busy
                   : h.metric == HpaMetric::queue     ? p.in_flight
                                                      : p.ttft_ms;
      const double ratio = row.metric / h.target;
      if (std::abs(ratio - 1) > h.tolerance) {
        recommended = static_cast<long>(std::ceil(static_cast<double>(ready) * ratio - 1e-9));
        // Replicas still starting were asked for by an earlier scale-up: no scale-down meanwhile.
        if (recommended < current && !starting.empty()) recommended = current;
      }
    } else if (row.offered_rps > 0) {
      recommended = std::max<long>(current, 1);
    }
    recommended = std::clamp(recommended, least, most);
    // Stabilization: scale up to the lowest, down to the highest recommendation of its window.
    history.push_back({t, recommended});
    while (!history.empty() && history.front().time_s < t - window - 1e-9) history.pop_front();
    long up = recommended, down = recommended;
    for (const Recommendation& r : history) {
      if (r.time_s >= t - h.scale_up_stabilization_s - 1e-9) up = std::min(up, r.replicas);
      if (r.time_s >= t - h.scale_down_stabilization_s - 1e-9) down = std::max(down, r.replicas);
    }
    long next = current < up ? up : current > down ? down : current;
    // Default scale-up policy: at most max(100%, 4 pods) more per period.
    next = std::min(next, std::max(2 * current, current + 4));
    if (next > current) {
      ++out.scale_ups;
      const long need = c.service_gpus(next) - c.service_gpus(current);
      const long free = c.free_gpus(current, jobs);
      double delay = out.scale_up_delay_s;
      if (need > free) {
        // Training jobs give their GPUs back after a checkpoint.
        const long preempt = std::min(jobs, (need - free + job_gpus - 1) / job_gpus);
        jobs -= preempt;
        row.preemptions = preempt;
        out.preemptions += preempt;
        delay += s.training.checkpoint_s;
      }
      for (long i = current; i < next; ++i) starting.push_back(t + delay);
    } else if (next < current) {
      ++out.scale_downs;
      long drop = current - next;
      // Replicas not yet serving go first (latest first), then serving ones.
      std::sort(starting.begin(), starting.end());
      while (drop > 0 && !starting.empty()) {
        starting.pop_back();
        --drop;
      }
      ready -= drop;
    }
    start_jobs();
    row.desired = next;
    row.ready = ready;
    row.starting = static_cast<long>(starting.size());
    row.service_gpus = c.service_gpus(ready + row.starting);
    row.training_gpus = jobs * job_gpus;
    out.offered_requests += requests;
    out.missed_requests += row.missed;
    out.service_gpu_hours += static_cast<double>(row.service_gpus) * step / 3600;
    out.training_gpu_hours += static_cast<double>(row.training_gpus) * step / 3600;
    out.max_replicas_used = std::max(out.max_replicas_used, next);
    out.timeline.push_back(row);
  }
  out.training_overhead_gpu_hours = static_cast<double>(job_gpus) *
                                    (static_cast<double>(job_starts) * s.training.restart_s +
                                     static_cast<double>(out.preemptions) * s.training.checkpoint_s) /
                                    3600;
  // A fixed fleet sized for the peak at the same SLO.
  out.fixed_replicas = std::max(h.min_replicas, static_cast<long>(std::ceil(out.peak_rate / m.replica_rate - 1e-9)));
  out.fixed_gpus = c.service_gpus(out.fixed_replicas);
  out.fixed_gpu_hours = static_cast<double>(out.fixed_gpus) * out.duration_s / 3600;
  if (out.fixed_replicas > c.capacity())
    out.notes.push_back(fmt::format("the fixed fleet for the peak ({} replicas) does not fit the cluster ({})",
                                    out.fixed_replicas, c.capacity()));
  out.notes.push_back(
      fmt::format("scale-up delay {:.0f} s: node start {:.0f} s + pod start {:.0f} s + {:.1f} GB of "
                  "weights at {:.2f} GB/s ({:.0f} s; {}); +{:.0f} s when a training job must "
                  "checkpoint first",
                  out.scale_up_delay_s, s.startup.node_start_s, s.startup.pod_start_s, m.weight_bytes / 1e9,
                  m.storage_read_Bps / 1e9, out.load_s, m.storage_source, s.training.checkpoint_s));
  return out;
}

AutoscaleResult simulate_autoscale(const ServiceSpec& s, const LoadCurve& curve, const AutoscaleOptions& o) {
  return simulate_autoscale(s, curve, model_service(s, o));
}

// ---------------------------------------------------------------------------------------------
// Reports: text, JSON and CSV from the one result.

std::string autoscale_text(const AutoscaleResult& r) {
  std::string out =
      fmt::format("# autoscale {} ({}) on {} x {}; load: {}\n", r.service, r.model, r.cluster_gpus, r.gpu, r.curve);
  out += fmt::format("Replica           {:.2f} req/s within the SLO; scale-up delay {:.0f} s\n", r.replica_rate,
                     r.scale_up_delay_s);
  out += fmt::format("Load              {:.0f} requests over {:.1f} h, peak {:.2f} req/s\n", r.offered_requests,
                     r.duration_s / 3600, r.peak_rate);
  out += fmt::format("SLO               {:.0f} requests beyond ready capacity ({:.3f}% of all; attainment {:.3f}%)\n",
                     r.missed_requests, r.offered_requests > 0 ? 100 * r.missed_requests / r.offered_requests : 0.0,
                     100 * r.slo_attainment());
  out += fmt::format("Scaling           {} scale-ups, {} scale-downs, up to {} replicas\n", r.scale_ups, r.scale_downs,
                     r.max_replicas_used);
  out += fmt::format(
      "GPU-hours         service {:.1f}; fixed fleet for the peak {:.1f} ({} replicas, {} GPUs): "
      "{:.0f}% saved\n",
      r.service_gpu_hours, r.fixed_gpu_hours, r.fixed_replicas, r.fixed_gpus,
      r.fixed_gpu_hours > 0 ? 100 * (1 - r.service_gpu_hours / r.fixed_gpu_hours) : 0.0);
  out += fmt::format(
      "Training          {:.1f} GPU-hours lent ({:.1f} lost to restarts and checkpoints); {} "
      "preemptions\n",
      r.training_gpu_hours, r.training_overhead_gpu_hours, r.preemptions);
  // SLO misses per hour, the time series in brief.
  out += "Misses per hour  ";
  const double hour = 3600;
  for (double a = 0; a < r.duration_s - 1e-9; a += hour) {
    double missed = 0;
    for (const auto& s : r.timeline)
      if (s.time_s >= a && s.time_s < a + hour) missed += s.missed;
    out += fmt::format(" {:.0f}", missed);
  }
  out += "\n";
  for (const auto& n : r.notes) out += "  note: " + n + "\n";
  return out;
}

nlohmann::json autoscale_json(const AutoscaleResult& r) {
  nlohmann::json j{
      {"service", r.service},
      {"model", r.model},
      {"gpu", r.gpu},
      {"cluster_gpus", r.cluster_gpus},
      {"curve", r.curve},
      {"replica_rate", r.replica_rate},
      {"scale_up_delay_s", r.scale_up_delay_s},
      {"weights_load_s", r.load_s},
      {"duration_s", r.duration_s},
      {"offered_requests", r.offered_requests},
      {"missed_requests", r.missed_requests},
      {"slo_attainment", r.slo_attainment()},
      {"peak_rate", r.peak_rate},
      {"max_replicas_used", r.max_replicas_used},
      {"scale_ups", r.scale_ups},
      {"scale_downs", r.scale_downs},
      {"service_gpu_hours", r.service_gpu_hours},
      {"training_gpu_hours", r.training_gpu_hours},
      {"training_overhead_gpu_hours", r.training_overhead_gpu_hours},
      {"preemptions", r.preemptions},
      {"fixed", {{"replicas", r.fixed_replicas}, {"gpus", r.fixed_gpus}, {"gpu_hours", r.fixed_gpu_hours}}},
      {"notes", r.notes}};
  j["latency_curve"] = nlohmann::json::array();
  for (const auto& p : r.latency_curve)
    j["latency_curve"].push_back({{"load", p.load},
                                  {"ttft_ms", p.ttft_ms},
                                  {"tpot_ms", p.tpot_ms},
                                  {"busy", p.busy},
                                  {"in_flight", p.in_flight}});
  j["timeline"] = nlohmann::json::array();
  for (const auto& s : r.timeline)
    j["timeline"].push_back({{"time_s", s.time_s},
                             {"offered_rps", s.offered_rps},
                             {"capacity_rps", s.capacity_rps},
                             {"desired", s.desired},
                             {"ready", s.ready},
                             {"starting", s.starting},
                             {"metric", s.metric},
                             {"ttft_ms", s.ttft_ms},
                             {"missed", s.missed},
                             {"service_gpus", s.service_gpus},
                             {"training_gpus", s.training_gpus},
                             {"preemptions", s.preemptions}});
  return j;
}

std::string autoscale_timeline_csv(const AutoscaleResult& r) {
  std::string out =
      "time_s,offered_rps,capacity_rps,desired,ready,starting,metric,ttft_ms,missed,service_gpus,training_gpus,"
      "preemptions\n";
  for (const auto& s : r.timeline)
    out += fmt::format("{:g},{:.4f},{:.4f},{},{},{},{:.4f},{:.2f},{:.2f},{},{},{}\n", s.time_s, s.offered_rps,
                       s.capacity_rps, s.desired, s.ready, s.starting, s.metric, s.ttft_ms, s.missed, s.service_gpus,
                       s.training_gpus, s.preemptions);
  return out;
}

}  // namespace gf::sched
