#pragma once
// Imported jobs and nodes written in the formats `gpufabric schedule` reads back: gpufabric's job
// CSV (name,submit,duration,gpus,mig,pods,cpu_milli,memory_mib,qos; docs/schedule.md) and the PAI
// node list (sn,cpu_milli,memory_mib,gpu,model). Names are quoted as RFC 4180 needs.
#include <string>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/import/import_report.hpp"
#include "sched/job.hpp"

namespace gf::sched {

std::string trace_csv(const std::vector<Job>& jobs);
std::string node_list_csv(const std::vector<Node>& nodes);

// Sorts jobs (each with the file's text of its submit time) by submit time, makes the first
// second 0 and moves them into `out`. Throws InputError naming `file`, what was read and why each
// record was left out when there are none, and at a job's line (`submit_field`, `duration_field`)
// when it lies further from the first or runs longer than a trace may hold.
struct TraceFields {
  std::string what;  // "GPU job that ran"
  std::string valid;
  std::string submit_field, duration_field;
};
void finish_trace(std::vector<std::pair<Job, std::string>> jobs, const std::string& file, const TraceFields& fields,
                  ImportedTrace& out);

}  // namespace gf::sched
