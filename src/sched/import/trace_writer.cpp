#include "sched/import/trace_writer.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sched/csv_table.hpp"
#include "sched/trace_reader.hpp"

namespace gf::sched {

std::string trace_csv(const std::vector<Job>& jobs) {
  std::string out = "name,submit,duration,gpus,mig,pods,cpu_milli,memory_mib,qos\n";
  for (const auto& j : jobs)
    out += fmt::format("{},{},{},{},{},{},{},{},{}\n", csv_field(j.name), j.submit, j.duration, j.pod.gpus,
                       csv_field(j.pod.mig), j.pods, j.pod.cpu_milli, j.pod.memory_mib, csv_field(j.qos));
  return out;
}

std::string node_list_csv(const std::vector<Node>& nodes) {
  std::string out = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (const auto& n : nodes)
    out += fmt::format("{},{},{},{},{}\n", csv_field(n.name), n.cpu_milli, n.memory_mib, n.gpus.size(),
                       csv_field(n.model));
  return out;
}

void finish_trace(std::vector<std::pair<Job, std::string>> jobs, const std::string& file, const TraceFields& fields,
                  ImportedTrace& out) {
  if (jobs.empty()) {
    std::string why;
    for (const auto& [reason, n] : out.report.skipped) why += fmt::format("; {} {}", n, reason);
    throw InputError({file, 0, 0}, "rows", fmt::format("no {} ({} read{})", fields.what, out.report.records, why),
                     fields.valid);
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const auto& a, const auto& b) { return a.first.submit < b.first.submit; });
  const double origin = jobs.front().first.submit;
  out.report.time_origin = jobs.front().second;
  for (auto& [j, stamp] : jobs) {
    j.submit -= origin;
    if (j.submit > kMaxTraceSeconds)
      throw InputError({file, j.line, 0}, fields.submit_field,
                       fmt::format("{} is {:.3g} s after the first job's {}", stamp, j.submit, out.report.time_origin),
                       "jobs within 3,000 years of one another");
    if (j.duration > kMaxTraceSeconds)
      throw InputError({file, j.line, 0}, fields.duration_field, fmt::format("the job runs {:.3g} s", j.duration),
                       "a duration under 3,000 years");
    out.jobs.push_back(std::move(j));
  }
}

}  // namespace gf::sched
