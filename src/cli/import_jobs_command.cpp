#include "cli/import_jobs_command.hpp"

#include <fmt/format.h>

#include <map>
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

std::string report_lines(const sched::ImportReport& r) {
  std::string out;
  if (!r.skipped.empty()) {
    std::vector<std::string> parts;
    for (const auto& [why, n] : r.skipped) parts.push_back(fmt::format("{} {}", n, why));
    out += "  left out: " + join(parts, "; ") + "\n";
  }
  for (const auto& w : r.warnings) out += "  warning: " + w + "\n";
  return out;
}

std::string trace_summary(const sched::ImportedTrace& t, const std::string& what, const std::string& in,
                          const std::string& out) {
  long gpus = 0, mig = 0;
  for (const auto& j : t.jobs) {
    gpus += static_cast<long>(j.pods) * j.pod.gpus;
    mig += j.pod.mig.empty() ? 0 : j.pods;
  }
  std::string s =
      fmt::format("Imported {} ({}{}) from {} ({} read) into {}\n",
                  count_of(static_cast<long>(t.jobs.size()), "GPU job"), count_of(gpus, "GPU"),
                  mig > 0 ? ", " + count_of(mig, "MIG instance") : "", in, count_of(t.report.records, what), out);
  s += fmt::format("  submit times are seconds after {}, the first imported job's\n", t.report.time_origin);
  s += report_lines(t.report);
  s += fmt::format("Replay it: gpufabric schedule --trace {} --preset dgx-a100 --nodes 8 (or --nodes-file NODES.csv)\n",
                   out);
  return s;
}

std::string nodes_summary(const sched::ImportedNodes& n, const std::string& in, const std::string& out) {
  std::map<std::string, long> by_model;
  for (const auto& node : n.nodes) by_model[node.model] += static_cast<long>(node.gpus.size());
  std::vector<std::string> models;
  for (const auto& [m, g] : by_model) models.push_back(fmt::format("{} x{}", m, g));
  const long gpus =
      std::accumulate(by_model.begin(), by_model.end(), 0L, [](long a, const auto& e) { return a + e.second; });
  std::string s = fmt::format("Imported {} ({}: {}) from {} ({} read) into {}\n",
                              count_of(static_cast<long>(n.nodes.size()), "GPU node"), count_of(gpus, "GPU"),
                              join(models, ", "), in, count_of(n.report.records, "node"), out);
  s += report_lines(n.report);
  s += fmt::format("Use it: gpufabric schedule --nodes-file {} --trace TRACE.csv\n", out);
  return s;
}

}  // namespace

bool JobImportOptions::parsed() const {
  for (const CLI::App* sub : {sacct, k8s_pods, k8s_nodes})
    if (sub != nullptr && sub->parsed()) return true;
  return false;
}

std::string JobImportOptions::run() const {
  refuse_same_file({{"FILE", input}}, {{"--output", output}});
  check_writable(output, "--output");
  const std::string text = read_text_file(input, "FILE");
  if (k8s_nodes != nullptr && k8s_nodes->parsed()) {
    const auto n =
        sched::import_k8s_nodes(text, input, [](const std::string& p) { return probe::gpu_model_for_name(p); });
    const std::string csv = sched::node_list_csv(n.nodes);
    std::vector<std::string> skipped;
    (void)sched::parse_nodes(sched::parse_csv(csv, output), false, skipped);  // what schedule --nodes-file reads
    write_whole(output, csv, "--output");
    return nodes_summary(n, input, output);
  }
  const bool slurm = sacct != nullptr && sacct->parsed();
  const auto t = slurm ? sched::import_sacct(text, input) : sched::import_k8s_pods(text, input);
  const std::string csv = sched::trace_csv(t.jobs);
  (void)sched::parse_trace(sched::parse_csv(csv, output), false);  // what schedule --trace reads
  write_whole(output, csv, "--output");
  return trace_summary(t, slurm ? "job" : "pod", input, output);
}

void add_job_importers(CLI::App& import_app, JobImportOptions& options) {
  const auto add = [&](const char* name, const std::string& what, const std::string& out_what) {
    CLI::App* sub = import_app.add_subcommand(name, what);
    sub->add_option("file", options.input, "FILE: " + what)->required();
    sub->add_option("-o,--output", options.output, out_what)->required();
    return sub;
  };
  options.sacct =
      add("sacct", "Slurm accounting (sacct --parsable2 with its header) as a job trace for `schedule --trace`",
          "the job trace to write (gpufabric's job CSV)");
  options.k8s_pods = add("k8s-pods",
                         std::string("A Kubernetes pod list (`") + sched::kPodsCommand +
                             "`), its GPU pods as a job trace for `schedule --trace`",
                         "the job trace to write (gpufabric's job CSV)");
  options.k8s_nodes = add("k8s-nodes",
                          std::string("A Kubernetes node list (`") + sched::kNodesCommand +
                              "`) with NVIDIA GPU labels, as a node list for `schedule --nodes-file`",
                          "the node list to write (sn,cpu_milli,memory_mib,gpu,model)");
}

}  // namespace gf::cli
