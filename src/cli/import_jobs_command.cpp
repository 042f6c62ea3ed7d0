#include "cli/import_jobs_command.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <numeric>

#include "cli/output_files.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "probe/catalog_match.hpp"
#include "sched/csv_table.hpp"
#include "sched/import/k8s_nodes.hpp"
#include "sched/import/k8s_pods_trace.hpp"
#include "sched/import/sacct_trace.hpp"
#include "sched/import/trace_writer.hpp"
#include "sched/trace_reader.hpp"

namespace gf::cli {

namespace {

// "1 GPU job", "16 GPU jobs".
std::string count_of(long n, const std::string& thing) { return fmt::format("{} {}{}", n, thing, n == 1 ? "" : "s"); }

// What was left out, as a line of the summary; the report's warnings go to stderr.
std::string left_out(const sched::ImportReport& r) {
  if (r.skipped.empty()) return {};
  std::vector<std::string> parts;
  for (const auto& [why, n] : r.skipped) parts.push_back(fmt::format("{} {}", n, why));
  return "\n  left out: " + join(parts, "; ");
}

std::string trace_summary(const sched::ImportedTrace& t, const std::string& what, const std::string& in,
                          const std::string& out) {
  long gpus = 0, mig = 0;
  for (const auto& j : t.jobs) {
    gpus += static_cast<long>(j.pods) * j.pod.gpus;
    mig += j.pod.mig.empty() ? 0 : j.pods;
  }
  return fmt::format(
      "{} ({}{}) from {} ({} read)\n  submit times are seconds after {}, the first imported job's{}\nReplay it: "
      "gpufabric schedule --trace {} --preset dgx-a100 --nodes 8 (or --nodes-file NODES.csv)",
      count_of(static_cast<long>(t.jobs.size()), "GPU job"), count_of(gpus, "GPU"),
      mig > 0 ? ", " + count_of(mig, "MIG instance") : "", in, count_of(t.report.records, what), t.report.time_origin,
      left_out(t.report), out);
}

std::string nodes_summary(const sched::ImportedNodes& n, const std::string& in, const std::string& out) {
  std::map<std::string, long> by_model;
  for (const auto& node : n.nodes) by_model[node.model] += static_cast<long>(node.gpus.size());
  std::vector<std::string> models;
  for (const auto& [m, g] : by_model) models.push_back(fmt::format("{} x{}", m, g));
  const long gpus =
      std::accumulate(by_model.begin(), by_model.end(), 0L, [](long a, const auto& e) { return a + e.second; });
  return fmt::format("{} ({}: {}) from {} ({} read){}\nUse it: gpufabric schedule --nodes-file {} --trace TRACE.csv",
                     count_of(static_cast<long>(n.nodes.size()), "GPU node"), count_of(gpus, "GPU"), join(models, ", "),
                     in, count_of(n.report.records, "node"), left_out(n.report), out);
}

enum class JobFile { sacct, k8s_pods, k8s_nodes };

// FILE, and the runner: the CSV is read back by the reader `schedule` uses before it is returned,
// so nothing is written that `schedule` would refuse.
ImportRun add_job_importer(CLI::App& sub, JobFile kind, const std::string& what) {
  auto file = std::make_shared<std::string>();
  sub.add_option("file", *file, "FILE: " + what)->required();
  return [file, kind](const std::string& output) {
    const std::string& input = *file;
    const std::string text = read_text_file(input, "FILE");
    const std::string shown = output.empty() ? "OUT.csv" : output;
    ImportOutput out;
    out.inputs = {{"FILE", input}};
    if (kind == JobFile::k8s_nodes) {
      const auto n =
          sched::import_k8s_nodes(text, input, [](const std::string& p) { return probe::gpu_model_for_name(p); });
      out.text = sched::node_list_csv(n.nodes);
      std::vector<std::string> skipped;
      (void)sched::parse_nodes(sched::parse_csv(out.text, shown), false, skipped);  // what --nodes-file reads
      out.summary = nodes_summary(n, input, shown);
      out.warnings = n.report.warnings;
      return out;
    }
    const bool slurm = kind == JobFile::sacct;
    const auto t = slurm ? sched::import_sacct(text, input) : sched::import_k8s_pods(text, input);
    out.text = sched::trace_csv(t.jobs);
    (void)sched::parse_trace(sched::parse_csv(out.text, shown), false);  // what schedule --trace reads
    out.summary = trace_summary(t, slurm ? "job" : "pod", input, shown);
    out.warnings = t.report.warnings;
    return out;
  };
}

}  // namespace

ImportRun add_sacct_importer(CLI::App& sub) {
  return add_job_importer(sub, JobFile::sacct, "Slurm accounting (sacct --parsable2 with its header)");
}

ImportRun add_k8s_pods_importer(CLI::App& sub) {
  return add_job_importer(sub, JobFile::k8s_pods, std::string("a Kubernetes pod list (`") + sched::kPodsCommand + "`)");
}

ImportRun add_k8s_nodes_importer(CLI::App& sub) {
  return add_job_importer(
      sub, JobFile::k8s_nodes,
      std::string("a Kubernetes node list (`") + sched::kNodesCommand + "`) with NVIDIA GPU labels");
}

}  // namespace gf::cli
