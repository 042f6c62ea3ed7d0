#pragma once
// `gpufabric schedule` output: the per-policy table a platform team takes to a design review,
// the fill experiment's curve beside it, JSON, and the allocation timeline as CSV.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sched/fill_experiment.hpp"
#include "sched/simulator.hpp"
#include "sched/trace_reader.hpp"

namespace gf::report {

// What was replayed on what, for the header.
struct ScheduleInput {
  std::string trace;  // file
  std::string format;
  long jobs = 0;
  std::string cluster;  // "1,213 nodes, 6,212 GPUs (G2 4,392, ...)" or the preset
  long gpus = 0;
  double offered_load = 0;  // after time scaling
  double time_scale = 1;
  std::vector<std::string> skipped;
  std::vector<std::string> notes;
};

std::string schedule_text(const ScheduleInput& in, const std::vector<sched::ScheduleResult>& results,
                          const std::vector<sched::Job>& jobs);
nlohmann::json schedule_json(const ScheduleInput& in, const std::vector<sched::ScheduleResult>& results,
                             const std::vector<sched::Job>& jobs);
// One row per job and policy: name, policy, state, submit, start, end, queue, JCT, slowdown, preemptions.
std::string schedule_csv(const std::vector<sched::ScheduleResult>& results, const std::vector<sched::Job>& jobs);

// `header`: the input header first (off when it follows the replay table).
std::string fill_text(const ScheduleInput& in, const std::vector<sched::FillCurve>& curves, int repeats,
                      bool header = true);
nlohmann::json fill_json(const ScheduleInput& in, const std::vector<sched::FillCurve>& curves, int repeats);
std::string fill_csv(const std::vector<sched::FillCurve>& curves);

// A self-contained HTML page (no script): the comparison table and a chart of allocated GPUs over
// time per policy (from the timelines), fragmented GPUs beneath, and the fill experiment's curve.
std::string schedule_html(const ScheduleInput& in, const std::vector<sched::ScheduleResult>& results,
                          const std::vector<sched::Job>& jobs, const std::vector<sched::FillCurve>& curves = {},
                          int repeats = 0);

// The charts of allocated and fragmented GPUs over time (allocation as % of `gpus`, or in GPUs
// when it is 0), for the schedule's report and the planner's (`plan --timeline`).
std::string timeline_charts_html(const std::vector<sched::ScheduleResult>& results, double gpus);
// A timeline CSV written by `schedule --timeline`, back as per-policy timelines.
std::vector<sched::ScheduleResult> read_timeline_csv(const std::string& path);

// t, then per policy: allocated GPUs, GPUs in use, running, waiting, fragmented GPUs.
std::string timeline_csv(const std::vector<sched::ScheduleResult>& results);

// A one-line description of a node list: "1,213 nodes, 6,212 GPUs: G2 4,392, T4 ...".
std::string describe_nodes(const std::vector<sched::Node>& nodes);

}  // namespace gf::report
