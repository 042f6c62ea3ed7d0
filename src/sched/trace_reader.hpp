#pragma once
// Job traces and node lists. Two formats each:
//  - the Alibaba PAI GPU trace of 2023 (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023;
//    Weng et al., "Beware of Fragmentation", USENIX ATC '23): pod lists
//    `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time`
//    (the time columns may be absent, as in the resampled lists) and node lists
//    `sn,cpu_milli,memory_mib,gpu,model`;
//  - gpufabric's generic job CSV (README, "Job traces"): `name,submit,duration|model+steps,gpus,...`.
// Every row is checked; a bad one is an InputError naming its file, line and field, or, with
// `skip_bad`, it is counted and listed and the rest are read.
#include <string>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/csv_table.hpp"
#include "sched/job.hpp"

namespace gf::sched {

// The bounds every row is held to (anything past them is a typo, or a file of another kind).
inline constexpr double kMaxTraceSeconds = 1e11;  // over 3,000 years
inline constexpr long kMaxCpuMilli = 100'000'000;
inline constexpr long kMaxMemoryMib = 1L << 40;
inline constexpr long kMaxGpusPerPod = 64;

struct Trace {
  std::string file;
  std::string format;  // "alibaba-pai-2023" or "gpufabric"
  std::vector<Job> jobs;
  bool timed = true;                 // every job has a submit time and a duration (else only `--fill` can replay it)
  std::vector<std::string> skipped;  // "file:line: field: problem" for each row left out
};

Trace parse_trace(const CsvTable& t, bool skip_bad);
Trace read_trace(const std::string& path, bool skip_bad);

// A node list: the PAI format, optionally with gpufabric's extra columns `leaf` (leaf switch
// index) and a GPU model that names a catalog GPU (then its MIG profiles apply).
std::vector<Node> parse_nodes(const CsvTable& t, bool skip_bad, std::vector<std::string>& skipped);
std::vector<Node> read_nodes(const std::string& path, bool skip_bad, std::vector<std::string>& skipped);

}  // namespace gf::sched
