#include "cli/schedule_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli/number_options.hpp"
#include "cli/output_files.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/messages.hpp"
#include "report/schedule_report.hpp"
#include "sched/autoscale.hpp"
#include "sched/fill_experiment.hpp"
#include "sched/load_curve.hpp"
#include "sched/mig_layout.hpp"
#include "sched/sharing.hpp"
#include "sched/simulator.hpp"
#include "sched/trace_reader.hpp"
#include "sched/training_runtime.hpp"
#include "topo/topology.hpp"
#include "work/model_library.hpp"

namespace gf::cli {

namespace {

// Options of one mode given to another, which would ignore them: each names the option and the
// mode it belongs to.
void refuse_inert_options(const ScheduleOptions& o) {
  const std::pair<const char*, std::vector<const char*>> modes[] = {
      {"--mig-pack", {"--mig-strategy", "--gpus"}},
      {"--share", {"--replicas", "--rate", "--mig", "--isl", "--osl"}},
      {"--autoscale", {"--load"}},
  };
  for (const auto& [mode, flags] : modes)
    for (const char* flag : flags)
      if (o.given(flag) && !o.given(mode))
        throw InputError({}, flag, std::string("belongs to ") + mode + ", which is not given",
                         std::string(mode) + " with " + flag + ", or leave " + flag + " out");
  const bool fills = o.fill || (o.compare && !o.no_fill);
  for (const char* flag : {"--up-to", "--repeats", "--seed"})
    if (o.given(flag) && !fills)
      throw InputError({}, flag, "sets the fill experiment, which does not run",
                       "--fill or --compare with " + std::string(flag));
  if (o.no_fill && !o.compare)
    throw InputError({}, "--no-fill", "leaves the fill out of --compare, which is not given", "--compare --no-fill");
  for (const char* flag : {"--cpu-milli", "--memory-mib"})
    if (o.given(flag) && !o.nodes_file.empty())
      throw InputError({}, flag, "sizes the nodes of a preset, and --nodes-file gives its own",
                       "a preset with " + std::string(flag));
}

std::string mig_pack_text(const ScheduleOptions& o) {
  const sched::MigTable* table = sched::mig_table(o.cluster.gpu);
  if (o.cluster.gpu.empty())
    throw InputError({}, "--gpu", "--mig-pack needs the GPU model", "one of: " + join(sched::mig_gpus()));
  if (!table) {
    const auto names = sched::mig_gpus();
    const std::string near = suggest(o.cluster.gpu, names);
    throw InputError({}, "--gpu",
                     fmt::format("no MIG profiles for '{}'{}", o.cluster.gpu,
                                 near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)),
                     join(names));
  }
  if (o.mig_strategy != "single" && o.mig_strategy != "mixed")
    throw InputError({}, "--mig-strategy", "got '" + o.mig_strategy + "'", "single, mixed");
  const long gpus = parse_whole("--gpus", o.mig_gpus, 1, 100000);
  std::vector<std::string> requests;
  for (const auto& item : split_list(o.mig_pack)) {
    // "3g.40gb" or "3g.40gb*4" (four of them).
    const auto star = item.find('*');
    const std::string name = item.substr(0, star);
    const long count = star == std::string::npos ? 1 : parse_whole("--mig-pack", item.substr(star + 1), 1, 100000);
    for (long i = 0; i < count; ++i) requests.push_back(name);
  }
  if (requests.empty()) throw InputError({}, "--mig-pack", "no profiles given", "e.g. 3g.40gb*2,1g.10gb*3");
  const auto strategy = o.mig_strategy == "single" ? sched::MigStrategy::single : sched::MigStrategy::mixed;
  const auto r = sched::pack_mig(*table, requests, static_cast<int>(gpus), strategy);
  if (o.format == "json") {
    nlohmann::json j{
        {"gpu", table->gpu}, {"strategy", o.mig_strategy}, {"requests", requests.size()}, {"unplaced", r.unplaced}};
    j["gpus"] = nlohmann::json::array();
    for (const auto& g : r.gpus) j["gpus"].push_back(sched::describe(*table, g));
    j["reconfigure"] = nlohmann::json::array();
    for (const auto& h : r.reconfigure)
      j["reconfigure"].push_back({{"request", requests[h.request]}, {"gpu", h.gpu}, {"text", h.text}});
    return j.dump(2) + "\n";
  }
  std::string out =
      fmt::format("# MIG partition of {} requests on {} x {} ({} strategy; starts as nvidia-smi mig -lgipp)\n",
                  requests.size(), gpus, table->gpu, o.mig_strategy);
  for (std::size_t g = 0; g < r.gpus.size(); ++g) {
    int compute = 0;
    for (const auto& i : r.gpus[g]) compute += table->profiles[static_cast<std::size_t>(i.profile)].compute_slices;
    out += fmt::format("  GPU {:>3}  {:<48} {}/7 compute slices\n", g, sched::describe(*table, r.gpus[g]), compute);
  }
  out += fmt::format("placed {} of {}", requests.size() - static_cast<std::size_t>(r.unplaced), requests.size());
  if (r.unplaced > 0) {
    out += "; not placed:";
    std::map<std::string, int> missing;
    for (std::size_t i = 0; i < requests.size(); ++i)
      if (r.placed_gpu[i] < 0) ++missing[requests[i]];
    for (const auto& [n, c] : missing) out += fmt::format(" {} x{}", n, c);
  }
  out += "\n";
  for (const auto& h : r.reconfigure) out += "  reconfigure: " + h.text + "\n";
  return out;
}

std::string autoscale_run(const ScheduleOptions& o) {
  if (o.load.empty())
    throw InputError({}, "--load", "--autoscale needs a load curve",
                     "diurnal:AVERAGE_RPS[:PEAK_FACTOR] or a CSV file time_s,rate");
  const auto service = sched::load_service(o.autoscale);
  sched::LoadCurve curve;
  if (o.load.rfind("diurnal", 0) == 0) {
    const std::vector<std::string> bits = split_list(o.load, ':');
    if (bits.size() < 2 || bits[0] != "diurnal")
      throw InputError({}, "--load", "got '" + o.load + "'", "diurnal:AVERAGE_RPS[:PEAK_FACTOR], e.g. diurnal:20:3");
    const double avg = parse_positive("--load", bits[1], 1e7);
    const double peak = bits.size() > 2 ? parse_positive("--load", bits[2], 100) : 3.0;
    if (peak < 1) throw InputError({}, "--load", "a peak below the average", "a peak factor of 1 or more");
    curve = sched::diurnal_curve(avg, peak, 24, 60);
  } else {
    curve = sched::load_curve_csv(o.load);
  }
  const auto r = sched::simulate_autoscale(service, curve);
  if (!o.timeline.empty()) write_whole(o.timeline, sched::autoscale_timeline_csv(r), "--timeline");
  if (o.format == "json") return sched::autoscale_json(r).dump(2) + "\n";
  return sched::autoscale_text(r);
}

// Time-slicing, MPS and MIG for k replicas of a model on one GPU of the cluster's.
std::string sharing_run(const ScheduleOptions& o) {
  const bool has_cluster =
      !o.cluster.preset.empty() || !o.cluster.cluster_file.empty() || !o.cluster.positional.empty();
  if (!has_cluster)
    throw InputError({}, "--share", "needs the cluster whose GPU is shared", "--preset NAME (e.g. dgx-h100)");
  const hw::Catalog catalog = o.cluster.load_catalog();
  const topo::Topology t(o.cluster.load_spec(catalog), catalog);
  work::TrainingContext context(t);
  sched::SharingRequest r;
  r.model = work::library_model(o.share);
  r.jobs = parse_whole("--replicas", o.share_replicas, 1, sched::kMaxClients);
  r.rate = parse_positive("--rate", o.share_rate, 1e6);
  r.mig = o.share_mig;
  r.input = work::LengthDistribution(parse_whole("--isl", o.isl, 1, 1'000'000));
  r.output = work::LengthDistribution(parse_whole("--osl", o.osl, 1, 1'000'000));
  const auto report = sched::compare_sharing(context, r);
  if (o.format == "json") return sched::sharing_json(report).dump(2) + "\n";
  return sched::sharing_text(report);
}

}  // namespace

void ScheduleOptions::add_to(CLI::App& app) {
  this->app = &app;
  app.add_option("--trace", trace,
                 "Job trace: an Alibaba PAI 2023 pod list (data/traces/alibaba-pai-2023/) or gpufabric's job CSV");
  app.add_option("--nodes-file", nodes_file, "Node list (PAI format: sn,cpu_milli,memory_mib,gpu,model[,leaf])");
  cluster.add_to(app);
  app.add_option("--policy", policy, "Placement policy (--list); default fgd");
  app.add_flag("--compare", compare, "Run every policy on the same input and print one table");
  app.add_flag("--list", list, "List the policies");
  app.add_flag("--fill", fill,
               "FGD's experiment: pods arrive in random order, none leave, the unplaceable are dropped");
  app.add_flag("--no-fill", no_fill, "With --compare: the replay only, without the fill experiment");
  app.add_option("--up-to", up_to,
                 "For --fill: stop when the arrived GPU demand is this multiple of the GPUs (default 1.3)");
  app.add_option("--repeats", repeats, "Seeds for --fill (default 10, the paper's)");
  app.add_option("--seed", seed, "First seed for --fill (default 42)");
  app.add_option("--time-scale", time_scale, "Divide submit times by this (a busier cluster from the same jobs)");
  app.add_option("--target-load", target_load,
                 "Compress arrivals so the offered GPU load is this share of the GPUs (e.g. 0.9)");
  app.add_option("--restart", restart, "Seconds a preempted job loses to checkpoint and restart (default 60)");
  app.add_option("--timeline", timeline, "Write allocation over time as CSV");
  app.add_option("--jobs-csv", jobs_csv, "Write every job's outcome per policy as CSV");
  app.add_option("--report", report, "Write a self-contained HTML report (table and allocation chart)");
  app.add_option("--format", format, "table | json | csv");
  app.add_flag("--skip-bad", skip_bad, "Skip malformed trace rows (each is listed, and counted), instead of refusing");
  app.add_flag("--quiet", quiet, "No progress bar");
  app.add_option("--cpu-milli", cpu_milli,
                 "With a preset: thousandths of a CPU per node (default: the catalog CPU's cores)");
  app.add_option("--memory-mib", memory_mib, "With a preset: MiB of host memory per node (default: the preset's)");
  app.add_option("--mig-pack", mig_pack, "MIG partitioner: profiles to pack, e.g. 3g.40gb*2,1g.10gb*3 (with --gpu)");
  app.add_option("--gpus", mig_gpus, "GPUs for --mig-pack (default 1)");
  app.add_option("--mig-strategy", mig_strategy, "single | mixed (the NVIDIA device plugin's; default mixed)");
  app.add_option("--share", share,
                 "GPU sharing: k replicas of this model (library name) on one GPU of the cluster, under time-slicing, "
                 "MPS and MIG");
  app.add_option("--replicas", share_replicas, "For --share: replicas on the GPU (default 2)");
  app.add_option("--rate", share_rate, "For --share: Poisson requests/s offered to each replica (default 1)");
  app.add_option("--mig", share_mig, "For --share: the MIG profile (default: the largest with k instances)");
  app.add_option("--isl", isl, "For --share: input tokens per request (default 1024)");
  app.add_option("--osl", osl, "For --share: output tokens per request (default 256)");
  app.add_option("--autoscale", autoscale, "Elastic serving under an HPA: a service file (docs/autoscale-format.md)");
  app.add_option("--load", load, "Load curve for --autoscale: diurnal:AVERAGE_RPS[:PEAK] or a CSV time_s,rate");
}

std::string ScheduleOptions::run() const {
  if (format != "table" && format != "json" && format != "csv")
    throw InputError({}, "--format", "got '" + format + "'", "table, json, csv");
  if (list) {
    std::string out = "Placement policies (gpufabric schedule --policy NAME):\n";
    for (const auto& n : sched::policy_names())
      out += fmt::format("  {:<12} {}\n", n, sched::make_policy(n)->summary());
    return out;
  }
  refuse_inert_options(*this);
  // No output may replace an input or another output; every mode's outputs are checked before
  // any work, and written whole at the end.
  auto inputs = cluster_inputs(cluster);
  inputs.insert(inputs.end(),
                {{"--trace", trace}, {"--nodes-file", nodes_file}, {"--autoscale", autoscale}, {"--load", load}});
  refuse_same_file(inputs, {{"--report", report}, {"--timeline", timeline}, {"--jobs-csv", jobs_csv}});
  for (const auto& [flag, path] : {std::pair{"--timeline", timeline}, {"--report", report}, {"--jobs-csv", jobs_csv}})
    if (!path.empty()) check_writable(path, flag);
  if (!mig_pack.empty()) return mig_pack_text(*this);
  if (!autoscale.empty()) return autoscale_run(*this);
  if (!share.empty()) return sharing_run(*this);
  if (trace.empty())
    throw InputError({}, "--trace", "no job trace given",
                     "--trace FILE: a PAI 2023 pod list (data/traces/alibaba-pai-2023/openb_pod_list_default.csv) or "
                     "gpufabric's job CSV (README, 'Job traces')");
  report::ScheduleInput in;
  sched::Trace t = sched::read_trace(trace, skip_bad);
  // The cluster: a node list, or a built topology.
  std::vector<sched::Node> nodes;
  std::unique_ptr<topo::Topology> topology;
  const bool has_cluster = !cluster.preset.empty() || !cluster.cluster_file.empty() || !cluster.positional.empty();
  if (!nodes_file.empty() && has_cluster)
    throw InputError({}, "--nodes-file", "given with a cluster (--preset/--cluster)",
                     "one of --nodes-file or a cluster");
  if (!nodes_file.empty()) {
    nodes = sched::read_nodes(nodes_file, skip_bad, in.skipped);
    in.cluster = report::describe_nodes(nodes);
  } else if (has_cluster) {
    const hw::Catalog catalog = cluster.load_catalog();
    topology = std::make_unique<topo::Topology>(cluster.load_spec(catalog), catalog);
    nodes = sched::nodes_from_topology(*topology,
                                       cpu_milli.empty() ? 0 : parse_whole("--cpu-milli", cpu_milli, 1, 100000000),
                                       memory_mib.empty() ? 0 : parse_whole("--memory-mib", memory_mib, 1, 1L << 40));
    in.cluster = fmt::format("{} ({})", report::describe_nodes(nodes), topology->spec().name);
    for (const auto& n : topology->notes()) in.notes.push_back(n);
  } else {
    throw InputError({}, "--nodes-file", "no cluster given",
                     "--nodes-file FILE (data/traces/alibaba-pai-2023/openb_node_list_gpu_node.csv), or --preset NAME "
                     "--nodes N");
  }
  in.skipped.insert(in.skipped.begin(), t.skipped.begin(), t.skipped.end());
  in.trace = trace;
  in.format = t.format;
  in.jobs = static_cast<long>(t.jobs.size());
  const sched::ClusterState state(std::move(nodes));
  in.gpus = state.gpu_count();
  if (state.gpu_count() == 0) throw InputError({}, "--nodes-file", "the cluster has no GPUs", "nodes with GPUs");
  // Training workloads: their run time comes from the training model on the GPUs they get, which
  // needs the cluster's topology.
  std::unique_ptr<sched::TrainingRuntime> runtime;
  if (const auto it = std::find_if(t.jobs.begin(), t.jobs.end(), [](const sched::Job& j) { return j.training; });
      it != t.jobs.end()) {
    if (!topology)
      throw InputError({t.file, it->line, 0}, "model",
                       "a training workload needs a cluster built from a preset or cluster file (its links price the "
                       "job), not a node list",
                       "--preset NAME --nodes N [--fabric ...], or a duration column");
    sched::TrainingRuntime::fill_durations(*topology, t.jobs, t.file);
    runtime = std::make_unique<sched::TrainingRuntime>(*topology, t.jobs, state.nodes(), t.file);
    in.notes.push_back(
        "training jobs run as fast as the training model says for the GPUs they get, beside the "
        "training jobs sharing their nodes or leaf switches");
  }

  std::vector<std::string> names = compare ? sched::policy_names() : std::vector<std::string>{policy};
  std::vector<std::unique_ptr<sched::Policy>> policies;
  for (const auto& n : names) policies.push_back(sched::make_policy(n));
  ProgressBar bar(!quiet && stderr_is_terminal(), "");

  // What to run: the replay (not with --fill), FGD's fill experiment (--fill, and with --compare
  // unless --no-fill: on a trace like PAI 2023's, whose timing leaves the cluster nearly idle,
  // the fill is where placement policies differ).
  const bool do_fill = fill || (compare && !no_fill);
  bool do_replay = !fill;
  if (do_replay && !t.timed) {
    if (!compare)
      throw InputError({t.file, 1, 0}, "creation_time",
                       "this pod list has no times (a resampled list): it can only be replayed with --fill",
                       "--fill, or a list with creation_time, deletion_time and scheduled_time");
    do_replay = false;
    in.notes.push_back("the pod list has no times: only the fill experiment runs");
  }
  if (fill && (!time_scale.empty() || !target_load.empty()))
    throw InputError({}, "--fill", "given with --time-scale/--target-load (the fill experiment has no time)",
                     "--fill alone");
  sched::FillOptions fo;
  fo.up_to = parse_positive("--up-to", up_to, 10);
  fo.repeats = static_cast<int>(parse_whole("--repeats", repeats, 1, 1000));
  fo.seed = static_cast<std::uint64_t>(parse_whole("--seed", seed, 0, 1L << 40));
  sched::SimOptions so;
  so.runtime = runtime.get();
  so.restart_s = parse_positive("--restart", restart, 1e7);
  if (!time_scale.empty() && !target_load.empty())
    throw InputError({}, "--target-load", "given with --time-scale", "one of them");
  if (!time_scale.empty()) so.time_scale = parse_positive("--time-scale", time_scale, 1e9);
  if (do_replay && !target_load.empty()) {
    const double want = parse_positive("--target-load", target_load, 100);
    so.time_scale = sched::time_scale_for_load(t.jobs, state.gpu_count(), want);
    if (so.time_scale <= 0)
      throw InputError({}, "--target-load",
                       fmt::format("no compression of this trace's arrivals offers {:g} (at most {:.3g}: its work sits "
                                   "in jobs that outlive the arrival window)",
                                   want, sched::offered_load(t.jobs, state.gpu_count(), 1e9)),
                       "a lower load, or --time-scale");
  }
  if (do_replay) {
    in.time_scale = so.time_scale;
    in.offered_load = sched::offered_load(t.jobs, state.gpu_count(), so.time_scale);
  }
  // Queue disciplines do not matter to the fill (no pod waits): only policies that place
  // differently run it under --compare.
  std::vector<const sched::Policy*> fillers;
  for (const auto& p : policies)
    if (!compare || p->queueing() == sched::Queueing::skip) fillers.push_back(p.get());
  const std::size_t units = 1000 * ((do_replay ? policies.size() : 0) + (do_fill ? fillers.size() : 0));
  std::size_t done = 0;
  std::vector<sched::ScheduleResult> results;
  if (do_replay)
    for (const auto& p : policies) {
      so.progress = [&](double f) { bar.update(done + static_cast<std::size_t>(1000 * f), units); };
      results.push_back(sched::simulate(state, t.jobs, *p, so));
      done += 1000;
      bar.update(done, units);
    }
  std::vector<sched::FillCurve> curves;
  if (do_fill)
    for (const auto* p : fillers) {
      curves.push_back(sched::fill_experiment(state, t.jobs, *p, fo));
      done += 1000;
      bar.update(done, units);
    }
  if (!timeline.empty() && do_replay) write_whole(timeline, report::timeline_csv(results), "--timeline");
  if (!jobs_csv.empty() && do_replay) write_whole(jobs_csv, report::schedule_csv(results, t.jobs), "--jobs-csv");
  if (!report.empty()) write_whole(report, report::schedule_html(in, results, t.jobs, curves, fo.repeats), "--report");
  if (format == "json") {
    nlohmann::json j = do_replay ? report::schedule_json(in, results, t.jobs) : nlohmann::json::object();
    if (do_fill) j["fill"] = report::fill_json(in, curves, fo.repeats);
    return j.dump(2) + "\n";
  }
  if (format == "csv") {
    // The notes and warnings (the cluster's, the trace's) as `#` lines before the header, as every
    // CSV output carries them: pandas.read_csv(..., comment='#') reads past them.
    Messages m;
    for (const auto& n : in.notes) m.add(n);
    return csv_comment_lines(m) + (do_replay ? report::schedule_csv(results, t.jobs) : report::fill_csv(curves));
  }
  std::string out = do_replay ? report::schedule_text(in, results, t.jobs) : "";
  if (do_fill) out += report::fill_text(in, curves, fo.repeats, !do_replay);
  if (!timeline.empty()) out += do_replay ? "timeline: " + timeline + "\n" : "timeline: not written (no replay)\n";
  if (!report.empty()) out += "report: " + report + "\n";
  return out;
}

}  // namespace gf::cli
