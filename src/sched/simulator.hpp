#pragma once
// The scheduling simulation: jobs arrive, wait, start where the policy puts them, run (as fast
// as their placement and their neighbours on the fabric let them, when a runtime model is
// given), may be preempted, and leave. Event-driven; the same inputs give the same outputs.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/fragmentation.hpp"
#include "sched/job.hpp"
#include "sched/policy.hpp"

namespace gf::sched {

// How fast a job runs where it is placed. Implemented by the training model
// (training_runtime.hpp); jobs it does not know run at speed 1.
class RuntimeModel {
public:
  virtual ~RuntimeModel() = default;
  // Whether the model sets this job's speed (others run their duration as given).
  [[nodiscard]] virtual bool models(const Job& j) const = 0;
  // Its speed where placed, beside the other running jobs the model knows (1: as fast as at its
  // best placement on an idle cluster).
  virtual double speed(std::size_t job, const Placement& where,
                       const std::vector<std::pair<std::size_t, const Placement*>>& neighbours) = 0;
};

// Tiresias' discretised 2D-LAS: queue k holds jobs whose attained service (GPU-seconds) is below
// thresholds[k]; Tiresias' simulator (github.com/SymbioticLab/Tiresias) uses 3,250 and 7,200.
// A job waiting `promote_knob` times as long as it has run moves back to the first queue (0: off,
// the simulator's default).
struct LasOptions {
  std::vector<double> thresholds{3250, 7200};
  double promote_knob = 0;
};

struct SimOptions {
  double time_scale = 1;  // submit times are divided by this (more load on the same cluster)
  // A preempted job's cost: saving its state and restarting, seconds of work added back.
  double restart_s = 60;
  LasOptions las;
  bool timeline = true;
  RuntimeModel* runtime = nullptr;
  std::function<void(double)> progress;  // fraction of events done, now and then
};

enum class JobState { waiting, running, done, cancelled, unschedulable, preempted };
const char* to_string(JobState s);

struct JobOutcome {
  JobState state = JobState::waiting;
  double submit = 0;  // after time scaling
  double start = -1;  // first start
  double end = -1;
  double ran_s = 0;    // time spent running, over all its runs
  double ideal_s = 0;  // its duration at speed 1
  int preemptions = 0;
  Placement placement;  // the last one
  std::string why;      // unschedulable: which part of the request no node has
  // A MIG request that waited while re-cutting some GPU (its instances idle) would have placed
  // it: the first such GPU met.
  std::string reconfigure;
};

struct TimelinePoint {
  double t = 0;
  double allocated_gpus = 0;  // thousandths / 1000
  long gpus_in_use = 0;
  long running = 0;
  long waiting = 0;
  double fragmented_gpus = 0;  // FGD's measure under the trace's task mix
};

struct Distribution {
  double mean = 0, median = 0, p99 = 0, max = 0;
  long count = 0;
};

struct ScheduleMetrics {
  long jobs = 0, completed = 0, cancelled = 0, unschedulable = 0, never_started = 0, preemptions = 0;
  long mig_recut = 0;  // MIG requests that waited where re-cutting a GPU would have placed them
  double makespan_s = 0;
  // Time averages are over the arrival window (first to last arrival).
  double allocation = 0;       // time-averaged allocated share of the GPUs
  double gpus_in_use = 0;      // time-averaged GPUs with anything on them
  double fragmented_gpus = 0;  // time-averaged
  // Time-averaged free GPU capacity while some GPU job waits that it alone would fit in by
  // count: what fragmentation (not a full cluster) left unallocated.
  double stranded_gpus = 0;
  Distribution jct_s, queue_s, slowdown;
};

struct ScheduleResult {
  std::string policy;
  std::vector<JobOutcome> jobs;  // in the trace's order
  std::vector<TimelinePoint> timeline;
  ScheduleMetrics metrics;
};

ScheduleResult simulate(const ClusterState& cluster, const std::vector<Job>& jobs, const Policy& policy,
                        const SimOptions& options = {});

// Why no node of the cluster, even empty, could take the job; empty when some could.
std::string never_fits(const ClusterState& cluster, const Job& j);

// The offered GPU load of a trace over its arrival window (first to last arrival, submit times
// divided by `time_scale`): the GPU-seconds its jobs would run inside the window if each started
// on arrival, over the GPUs x the window. (A trace whose work sits in a few long jobs that
// outlive the window, like PAI 2023's, offers little load however much it is compressed.)
double offered_load(const std::vector<Job>& jobs, long gpus, double time_scale = 1);
// The time scale at which the offered load is `load`; negative when no compression reaches it.
double time_scale_for_load(const std::vector<Job>& jobs, long gpus, double load);

}  // namespace gf::sched
