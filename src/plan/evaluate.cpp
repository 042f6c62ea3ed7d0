#include "plan/evaluate.hpp"

#include "band/band_class.hpp"
#include "band/error_band.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/cluster_cost.hpp"
#include "plan/goodput.hpp"
#include "plan/training_search.hpp"
#include "work/mig_profile.hpp"
#include "work/model_size.hpp"
#include "work/parallel_layout.hpp"
#include "work/serving_fleet.hpp"

namespace gf::plan {
namespace {

constexpr double kDay = 86400;

// Bytes a checkpoint holds per parameter: bf16 weights (2) and Adam's fp32 master weights and two
// moments (12), as Megatron-LM and DeepSpeed save them. BigScience's BLOOM-176B full checkpoint
// was 2.3 TB, 13 bytes per parameter (../shared/research/failures.md).
constexpr double kCheckpointBytesPerParam = 14;
// Checkpoints kept on the file system (the last few, to survive a corrupt one): an assumption.
constexpr double kCheckpointsKept = 3;

// The shared file system checkpoints are written to, when the plan does not say: Meta's Tectonic
// cluster for Llama 3 sustains 2 TB/s (peak 7 TB/s) across its 7,500 storage servers ("The Llama 3
// Herd of Models", arXiv 2407.21783, section 3.3.1). A large, well-provisioned system: a plan
// for a smaller cluster should state its own (checkpoint: {total_GBps: ...}).
constexpr double kSharedStorageBps = 2e12;

// The aggregate rate the cluster writes (and reads) a checkpoint at: every node writes its shard
// at once (Megatron's distributed checkpoint) through its parallel file system client, and the
// file system caps the total.
std::pair<Bandwidth, Bandwidth> checkpoint_rates(const topo::Topology& t, const hw::Catalog& catalog,
                                                 const CheckpointSettings& s) {
  const auto& client = catalog.storage("lustre");
  const double per_node_write = s.per_node_Bps > 0 ? s.per_node_Bps : client.write.value();
  const double per_node_read = s.per_node_Bps > 0 ? s.per_node_Bps : client.read.value();
  const double total = s.total_Bps > 0 ? s.total_Bps : kSharedStorageBps;
  const double nodes = static_cast<double>(t.nodes());
  return {Bandwidth(std::min(per_node_write * nodes, total)), Bandwidth(std::min(per_node_read * nodes, total))};
}

void put_cost(nlohmann::json& j, const ClusterCost& c) {
  j["capex_usd"] = c.capex_usd();
  j["power_kw"] = c.facility_power_avg().value() / 1e3;
  j["power_kw_max"] = c.facility_power_max().value() / 1e3;
  j["racks"] = c.racks;
  j["switches"] = c.switches;
  j["optics"] = c.optics;
  j["nics"] = c.nics;
  j["cost_breakdown"] = {{"gpus", c.gpus_usd},         {"servers", c.servers_usd}, {"nics", c.nics_usd},
                         {"switches", c.switches_usd}, {"optics", c.optics_usd},   {"storage", c.storage_usd},
                         {"racks", c.racks_usd}};
}

void put_design(nlohmann::json& j, const Design& d, const topo::Topology* t) {
  j["design_key"] = d.key;
  j["source"] = d.source;
  j["gpu"] = d.gpu;
  j["gpus_per_node"] = d.gpus_per_node;
  j["intra_node"] = d.intra_node;
  j["network"] = d.network;
  j["nics_per_node"] = d.nics_per_node;
  j["gpudirect"] = d.gpudirect;
  j["p2p"] = d.p2p;
  j["oversubscription"] = d.oversubscription;
  j["fabric"] = d.fabric;
  if (t != nullptr) {
    const auto* f = t->fabric();
    j["fabric"] = f ? topo::to_string(f->shape().kind) : "none";
    j["tiers"] = f ? f->shape().tiers : 0;
    j["leaf_switches"] = f ? f->shape().leaves : 0;
    j["spine_switches"] = f ? f->shape().spines + f->shape().aggs_per_pod * f->shape().pods + f->shape().cores : 0;
    j["oversubscription"] = f ? f->shape().oversubscription : 1.0;
    j["network"] = t->network().name;
  }
}

// The limits a candidate breaks, each as "limit: value > bound"; `worst` is the largest value /
// bound among them (how far the candidate is from feasible, for "the closest candidate").
std::vector<std::string> limit_violations(const Limits& l, const nlohmann::json& j, const PriceCatalog& prices,
                                          double& worst, double workload_deadline = 0) {
  std::vector<std::string> out;
  worst = 0;
  auto over = [&](double value, double bound, std::string text) {
    if (!(value > bound)) return;
    out.push_back(std::move(text));
    worst = std::max(worst, value / bound);
  };
  const double capex = j.value("capex_usd", 0.0);
  if (l.budget_usd > 0) {
    const double years = l.tco_years > 0 ? l.tco_years : prices.lifetime.usd;
    const double spend = l.budget == BudgetKind::tco
                             ? capex + j.value("power_kw", 0.0) * 24 * 365.25 * years * prices.electricity.usd
                             : (j.value("cloud", false) ? j.value("cost_usd", 0.0) : capex);
    over(spend, l.budget_usd,
         fmt::format("budget: {} ${:.3g}M > ${:.3g}M", l.budget == BudgetKind::tco ? "TCO" : "spend", spend / 1e6,
                     l.budget_usd / 1e6));
  }
  if (l.power_kw > 0) {
    const double kw = j.value("power_kw_max", 0.0);
    over(kw, l.power_kw, fmt::format("power: {:.0f} kW > {:.0f} kW", kw, l.power_kw));
  }
  if (l.max_gpus > 0) {
    const long g = j.value("gpus", 0L);
    over(static_cast<double>(g), static_cast<double>(l.max_gpus), fmt::format("max_gpus: {} > {}", g, l.max_gpus));
  }
  if (l.racks > 0) {
    const long r = j.value("racks", 0L);
    over(static_cast<double>(r), static_cast<double>(l.racks), fmt::format("racks: {} > {}", r, l.racks));
  }
  double deadline = l.deadline_days;
  if (workload_deadline > 0 && (deadline <= 0 || workload_deadline < deadline)) deadline = workload_deadline;
  if (deadline > 0 && j.contains("time_days") && j["time_days"].is_number()) {
    const double d = j["time_days"].get<double>();
    over(d, deadline, fmt::format("deadline: {:.3g} days > {:.3g}", d, deadline));
  }
  return out;
}

void apply_limits(nlohmann::json& j, const Limits& l, const PriceCatalog& prices, double workload_deadline = 0) {
  double worst = 0;
  const auto violations = limit_violations(l, j, prices, worst, workload_deadline);
  j["limit_violations"] = violations;
  j["limit_excess"] = worst;
  j["feasible"] = violations.empty();
  if (!violations.empty()) j["why_not"] = join(violations, "; ");
}

// What every candidate record starts with: its key, workload and kind, infeasible until shown
// otherwise.
nlohmann::json candidate_record(const Unit& u, const std::string& workload) {
  nlohmann::json j;
  j["key"] = u.key;
  j["workload"] = workload;
  j["kind"] = u.serving ? "serving" : "training";
  j["feasible"] = false;
  return j;
}

nlohmann::json evaluate_training(const PlanInputs& in, const Unit& u) {
  const TrainingWorkload& w = in.plan.training[u.workload];
  const Design& d = in.designs.designs[u.design];
  nlohmann::json j = candidate_record(u, w.name);
  j["nodes"] = u.nodes;
  j["design"] = u.nodes > 1 || !d.partial ? fmt::format("{} x {}", u.nodes, d.label) : d.label;
  std::unique_ptr<topo::Topology> t;
  try {
    t = build_topology(d, u.nodes, in.catalog);
  } catch (const InputError& e) {
    put_design(j, d, nullptr);
    j["gpus"] = u.nodes * d.gpus_per_node;
    j["why_not"] = "cannot be built: " + e.problem();
    return j;
  }
  put_design(j, d, t.get());
  const long gpus = d.partial ? d.gpus_per_node : t->gpu_count();
  j["gpus"] = gpus;
  work::TrainingContext context(*t);
  const LayoutSearch s = search_layouts(context, w, in.plan.search, gpus);
  j["layouts_evaluated"] = s.layouts;
  j["layouts_invalid"] = s.invalid;
  j["pruned_memory"] = s.pruned_memory;
  j["layouts_timed"] = s.timed;
  if (!s.best) {
    j["why_not"] = s.timed == 0 && s.pruned_memory > 0
                       ? fmt::format("no layout fits in {:.0f} GiB per GPU (the leanest needs {:.0f} GiB)",
                                     t->gpu_spec().memory.value() / (1 << 30), s.smallest_memory / (1 << 30))
                       : "no valid layout divides the model, the GPUs and the global batch";
    return j;
  }
  const auto& r = s.result;
  std::vector<std::string> notes;
  const double params = work::count_parameters(w.model).total;
  const Bytes checkpoint(params * kCheckpointBytesPerParam);
  const auto [write, read] = checkpoint_rates(*t, in.catalog, in.plan.checkpoint);
  GoodputInputs gi;
  gi.gpus = gpus;
  gi.checkpoint = checkpoint;
  gi.write = write;
  gi.read = read;
  const Goodput g = goodput(gi);
  const double steps = w.tokens / (static_cast<double>(w.global_batch) * static_cast<double>(w.model.seq));
  const double ideal_s = steps * r.step_s;
  const double wall_s = ideal_s / g.fraction;
  j["layout"] = layout_label(*s.best);
  j["tp"] = s.best->layout.tp;
  j["pp"] = s.best->layout.pp;
  j["dp"] = s.best->layout.dp;
  if (s.best->layout.ep > 1) {
    j["ep"] = s.best->layout.ep;
    j["etp"] = s.best->layout.expert_tp();
    j["moe_overlap"] = work::to_string(s.best->moe_overlap);
  }
  j["step_s"] = r.step_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["mfu"] = r.mfu;
  j["memory_gib"] = r.memory.total / (1 << 30);
  j["bottleneck"] = r.bottleneck;
  j["dp_communication_s"] = r.dp_communication_s;
  j["steps"] = steps;
  j["time_days_ideal"] = ideal_s / kDay;
  j["time_days"] = wall_s / kDay;
  // The error band of the time (and so of the cost): how held-out public runs of this GPU family
  // and model class fell from the model's throughput, read the other way round.
  const band::Band tb = band::BandTable::builtin().lookup(
      "training", band::training_classes(d.gpu, params / 1e9, w.model.moe.has_value()));
  nlohmann::json bj = {{"class", tb.cls},
                       {"rows", tb.rows},
                       {"coverage", band::kCoverage},
                       {"text", band::describe(tb, band::Direction::inverse)},
                       {"short", band::describe_short(tb, band::Direction::inverse)}};
  if (tb.validated()) {
    const auto i = band::interval(tb, wall_s / kDay, band::Direction::inverse);
    bj["low"] = i.low;
    bj["high"] = i.high;
  } else {
    bj["unvalidated"] = true;
  }
  j["time_days_band"] = bj;
  j["goodput"] = g.fraction;
  j["interruptions_per_day"] = g.interruptions_per_day;
  j["checkpoint_gb"] = checkpoint.value() / 1e9;
  j["checkpoint_write_s"] = g.checkpoint_write.value();
  j["checkpoint_interval_s"] = g.interval.value();
  // The gradient reduction's collective as nccl-tests would report it: one DDP bucket (25 MiB)
  // reduced over the chosen layout's data-parallel group of GPU 0 (with its CP peers), on this
  // topology. Where the group spans servers this is the network's share; inside one, PCIe's or
  // NVLink's.
  if (s.best->layout.dp * s.best->layout.cp > 1) {
    auto group = work::group_of(s.best->layout, s.best->order, work::Axis::dp, 0);
    if (s.best->layout.cp > 1) {
      std::vector<long> joined;
      for (long g : group)
        for (long peer : work::group_of(s.best->layout, s.best->order, work::Axis::cp, g)) joined.push_back(peer);
      std::sort(joined.begin(), joined.end());
      group = joined;
    }
    const auto& ar = context.collective(group, comm::Op::all_reduce, 25.0 * 1024 * 1024,
                                        w.precision == work::Precision::fp16 ? "half" : "bfloat16");
    j["dp_busbw_GBps"] = ar.busbw_GBps;
    j["dp_group_gpus"] = static_cast<long>(group.size());
    j["dp_algo"] = std::string(comm::to_string(ar.algo));
  }
  const auto& b = r.breakdown;
  j["breakdown"] = {{"compute_s", b.compute_s},
                    {"tp_s", b.tp_s},
                    {"dp_exposed_s", b.dp_exposed_s},
                    {"pp_bubble_s", b.pp_bubble_s},
                    {"pp_p2p_s", b.pp_p2p_s},
                    {"cp_s", b.cp_s},
                    {"ep_s", b.ep_s},
                    {"sm_contention_s", b.sm_contention_s},
                    {"optimizer_s", b.optimizer_s}};
  // Cost: owning the cluster (capital amortised over its life, plus energy) or renting its GPUs.
  const ClusterCost c =
      cluster_cost(*t, gpus, checkpoint.value() * kCheckpointsKept, in.prices, d.partial ? 0 : in.plan.owned(d.source));
  if (c.owned_nodes > 0) {
    j["owned_nodes"] = c.owned_nodes;
    j["design"] = fmt::format("{} x {} ({} owned)", u.nodes, d.label, c.owned_nodes);
  }
  put_cost(j, c);
  const RunningCost run = running_cost(c, Seconds(wall_s), in.prices);
  j["energy_mwh"] = run.energy_mwh;
  j["energy_usd"] = run.energy_usd;
  j["cloud"] = in.plan.costs.cloud;
  if (in.plan.costs.cloud) {
    j["cost_usd"] = in.prices.cloud_gpu(d.gpu).usd * static_cast<double>(gpus) * wall_s / 3600;
  } else {
    j["cost_usd"] = run.total_usd();
  }
  j["amortised_capex_usd"] = run.amortised_capex_usd;
  for (const auto& a : c.assumptions) notes.push_back(a);
  j["notes"] = notes;
  apply_limits(j, in.plan.limits, in.prices, w.deadline_days);
  return j;
}

nlohmann::json evaluate_serving(const PlanInputs& in, const Unit& u) {
  const ServingWorkload& w = in.plan.serving[u.workload];
  const Design& d = in.designs.designs[u.design];
  nlohmann::json j = candidate_record(u, w.name);
  // Replicas live inside one server (TP within the node), or, for a model whose weights fill
  // more than 90% of a whole server's memory, span servers as pipeline stages (TP = the server's
  // GPUs, PP 2 to 4, vLLM's and TensorRT-LLM's multi-node layout): the smallest cluster that
  // holds one replica prices them.
  const double weight_bytes = work::count_parameters(w.model).total * work::weight_bytes(w.weights);
  std::vector<long> stages{1};
  const double server_memory = in.catalog.gpu(d.gpu).memory.value() * static_cast<double>(d.gpus_per_node);
  if (weight_bytes > 0.9 * server_memory) stages = {2, 3, 4};
  std::unique_ptr<topo::Topology> one;
  try {
    one = build_topology(d, stages.back(), in.catalog);
  } catch (const InputError& e) {
    put_design(j, d, nullptr);
    j["design"] = d.label;
    j["why_not"] = "cannot be built: " + e.problem();
    return j;
  }
  work::TrainingContext context(*one);
  std::vector<work::ReplicaSpec> candidates;
  for (long pp : stages) {
    for (long tp : {1L, 2L, 4L, 8L}) {
      if (tp > d.gpus_per_node || w.model.heads % tp != 0 || (pp > 1 && tp != d.gpus_per_node)) continue;
      work::ReplicaSpec r;
      r.tp = tp;
      r.pp = pp;
      r.weights = w.weights;
      r.kv = w.kv;
      candidates.push_back(r);
    }
  }
  // MIG instances compete with whole GPUs: a model that fits a slice may need less than a GPU
  // per replica (each profile at its maximum instance count, as the device plugin's `single`
  // strategy partitions a GPU). Slices too small for the weights are ruled out by the sizing.
  for (const auto& name : work::mig_profile_names(one->gpu_spec())) {
    const auto profile = work::mig_profile(one->gpu_spec(), name);
    if (profile.memory_bytes < 1.2 * weight_bytes) continue;  // weights plus a minimal KV cache
    work::ReplicaSpec r;
    r.weights = w.weights;
    r.kv = w.kv;
    r.mig = name;
    r.per_gpu = profile.max_instances;
    candidates.push_back(r);
  }
  work::LoadSpec load;
  load.input = work::LengthDistribution(w.isl);
  load.output = work::LengthDistribution(w.osl);
  load.seed = 1;
  work::SizingOptions so;
  so.requests = 600;
  work::FleetSizing peak;
  try {
    peak = work::size_fleet(context, w.model, candidates, load, w.rate * w.peak_factor, w.slo, so);
  } catch (const InputError& e) {
    put_design(j, d, nullptr);
    j["design"] = d.label;
    j["why_not"] = e.problem();
    return j;
  }
  if (peak.chosen < 0) {
    put_design(j, d, one.get());
    j["design"] = d.label;
    std::string why = "no replica layout meets the latency goals";
    for (const auto& l : peak.layouts)
      if (!l.why_not.empty()) why += fmt::format("; TP{}: {}", l.replica.tp, l.why_not);
    j["why_not"] = why;
    return j;
  }
  const auto& chosen = peak.layouts[static_cast<std::size_t>(peak.chosen)];
  const long gpus = chosen.gpus;
  const long nodes = std::max<long>(1, (gpus + d.gpus_per_node - 1) / d.gpus_per_node);
  // The fleet at the average rate: the same replica, as many as the average needs.
  const long replicas_avg = std::max<long>(1, static_cast<long>(std::ceil(w.rate / chosen.replica_rate - 1e-9)));
  std::unique_ptr<topo::Topology> t;
  try {
    t = build_topology(d, nodes, in.catalog);
  } catch (const InputError& e) {
    put_design(j, d, nullptr);
    j["design"] = fmt::format("{} x {}", nodes, d.label);
    j["why_not"] = "cannot be built at " + std::to_string(nodes) + " nodes: " + e.problem();
    return j;
  }
  put_design(j, d, t.get());
  j["design"] = fmt::format("{} x {}", nodes, d.label);
  j["nodes"] = nodes;
  j["gpus"] = gpus;
  if (!chosen.replica.mig.empty()) j["mig"] = chosen.replica.mig;
  j["replica_layout"] = !chosen.replica.mig.empty() ? "MIG " + chosen.replica.mig
                        : chosen.replica.pp > 1     ? fmt::format("TP{} PP{}", chosen.replica.tp, chosen.replica.pp)
                                                    : fmt::format("TP{}", chosen.replica.tp);
  j["layout"] = fmt::format("{} x {}", chosen.replicas, j["replica_layout"].get<std::string>());
  j["pp"] = chosen.replica.pp;
  j["peak_rate"] = w.rate * w.peak_factor;
  j["capacity_rate"] = chosen.replica_rate * static_cast<double>(chosen.replicas);
  j["tp"] = chosen.replica.tp;
  j["replicas"] = chosen.replicas;
  j["replicas_at_average"] = replicas_avg;
  j["replica_rate"] = chosen.replica_rate;
  j["ttft_ms_p"] = chosen.fleet.ttft_ms.p90;
  j["ttft_ms_p99"] = chosen.fleet.ttft_ms.p99;
  j["tpot_ms_p99"] = chosen.fleet.tpot_ms.p99;
  j["tpot_ms_p"] = chosen.fleet.tpot_ms.p90;
  const ClusterCost c = cluster_cost(*t, gpus, 0, in.prices, in.plan.owned(d.source));
  if (c.owned_nodes > 0) {
    j["owned_nodes"] = c.owned_nodes;
    j["design"] = fmt::format("{} x {} ({} owned)", nodes, d.label, c.owned_nodes);
  }
  put_cost(j, c);
  // Cost per million output tokens at the average rate, with the fleet sized for the peak.
  const double hour = 3600;
  const RunningCost run = running_cost(c, Seconds(hour), in.prices);
  const double tokens_per_hour = w.rate * static_cast<double>(w.osl) * hour;
  double usd_per_hour = run.total_usd();
  j["cloud"] = in.plan.costs.cloud;
  if (in.plan.costs.cloud) usd_per_hour = in.prices.cloud_gpu(d.gpu).usd * static_cast<double>(gpus);
  j["usd_per_hour"] = usd_per_hour;
  j["usd_per_mtok"] = usd_per_hour / (tokens_per_hour / 1e6);
  j["cost_usd"] = usd_per_hour * 24 * 365.25;  // a year of service
  j["energy_mwh"] = run.energy_mwh * 24 * 365.25;
  j["layouts_evaluated"] = static_cast<long>(candidates.size());
  j["notes"] = c.assumptions;
  apply_limits(j, in.plan.limits, in.prices);
  return j;
}

}  // namespace

std::vector<long> default_node_counts(const PlanSpec& plan, long gpus_per_node) {
  const long max_gpus = plan.limits.max_gpus > 0 ? plan.limits.max_gpus : 512;
  std::vector<long> out;
  for (long n = 1; n * gpus_per_node <= max_gpus; n *= 2) out.push_back(n);
  if (out.empty()) out.push_back(1);
  return out;
}

std::vector<Unit> enumerate_units(const PlanSpec& plan, const DesignSet& designs) {
  std::vector<Unit> out;
  for (std::size_t w = 0; w < plan.training.size(); ++w) {
    for (std::size_t d = 0; d < designs.designs.size(); ++d) {
      const Design& design = designs.designs[d];
      std::vector<long> counts =
          plan.design.node_counts.empty() ? default_node_counts(plan, design.gpus_per_node) : plan.design.node_counts;
      for (long n : counts) {
        if (design.partial && n > 1) continue;
        Unit u;
        u.workload = w;
        u.design = d;
        u.nodes = n;
        u.key = fmt::format("train:{}|{}|N{}", plan.training[w].name, design.key, n);
        out.push_back(u);
      }
    }
  }
  for (std::size_t w = 0; w < plan.serving.size(); ++w) {
    for (std::size_t d = 0; d < designs.designs.size(); ++d) {
      if (designs.designs[d].partial) continue;
      Unit u;
      u.serving = true;
      u.workload = w;
      u.design = d;
      u.key = fmt::format("serve:{}|{}", plan.serving[w].name, designs.designs[d].key);
      out.push_back(u);
    }
  }
  return out;
}

nlohmann::json evaluate_unit(const PlanInputs& in, const Unit& u) {
  try {
    return u.serving ? evaluate_serving(in, u) : evaluate_training(in, u);
  } catch (const InputError& e) {
    // A price or a rule the design breaks: the candidate is out, with the reason; the search goes on.
    nlohmann::json j =
        candidate_record(u, u.serving ? in.plan.serving[u.workload].name : in.plan.training[u.workload].name);
    put_design(j, in.designs.designs[u.design], nullptr);
    j["design"] = in.designs.designs[u.design].label;
    j["nodes"] = u.nodes;
    j["why_not"] = e.field().empty() ? e.problem() : e.field() + ": " + e.problem();
    return j;
  }
}

}  // namespace gf::plan
