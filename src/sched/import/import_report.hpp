#pragma once
// What an importer kept and what it left out, so the command can say both: a converted trace that
// silently dropped half of the file would be taken for the whole of it.
#include <map>
#include <string>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/job.hpp"

namespace gf::sched {

struct ImportReport {
  long records = 0;                     // jobs, pods or nodes in the file
  std::map<std::string, long> skipped;  // why -> how many
  std::vector<std::string> warnings;
  std::string time_origin;  // the file's timestamp that is second 0 of the trace (traces only)

  void skip(const std::string& why) { ++skipped[why]; }
};

struct ImportedTrace {
  std::vector<Job> jobs;
  ImportReport report;
};

struct ImportedNodes {
  std::vector<Node> nodes;
  ImportReport report;
};

}  // namespace gf::sched
