#pragma once
// The training model as the scheduler's runtime model: a training job's step priced on the GPUs
// it was given (spread over nodes or leaf switches, its collectives cross slower links), and its
// gradient all-reduces slowed by the other training jobs whose traffic meets it on the fabric.
// A job's speed is its step time at its compact placement on an idle cluster over its step time
// where it runs, beside its neighbours.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/job.hpp"
#include "sched/simulator.hpp"
#include "topo/topology.hpp"
#include "work/model_spec.hpp"
#include "work/train_step.hpp"
#include "work/training_context.hpp"

namespace gf::sched {

class TrainingRuntime final : public RuntimeModel {
public:
  // `jobs` and `nodes` (nodes_from_topology(t): each node's first_gpu is its place in `t`) are
  // read here; the topology must outlive the runtime. A training job whose model or layout the
  // training model refuses is an InputError at `file`, the job's line, naming the trace's column.
  TrainingRuntime(const topo::Topology& t, const std::vector<Job>& jobs, const std::vector<Node>& nodes,
                  std::string file = {});
  ~TrainingRuntime() override;
  TrainingRuntime(const TrainingRuntime&) = delete;
  TrainingRuntime& operator=(const TrainingRuntime&) = delete;

  // Sets every training job's duration: its steps at its compact placement (pods packed onto the
  // first nodes, TP innermost as Megatron numbers ranks) on an idle cluster. An InputError at
  // `file` and the job's line for a layout that is impossible or does not fit in GPU memory. A
  // job no node of `t` could hold keeps duration 0 (the simulator reports it unschedulable).
  static void fill_durations(const topo::Topology& t, std::vector<Job>& jobs, const std::string& file = {});

  [[nodiscard]] bool models(const Job& j) const override;
  double speed(std::size_t job, const Placement& where,
               const std::vector<std::pair<std::size_t, const Placement*>>& neighbours) override;

  // Seconds per step: at the compact placement; where placed, alone on the fabric; and beside
  // these neighbours. 0 for a job the runtime does not model or cannot place compactly.
  double compact_step_s(std::size_t job);
  double step_s(std::size_t job, const Placement& where);
  double step_s(std::size_t job, const Placement& where,
                const std::vector<std::pair<std::size_t, const Placement*>>& neighbours);

  // Training-step evaluations and flow-engine runs so far (each placement and each set of
  // neighbours is priced once), for tests and benchmarks.
  [[nodiscard]] std::size_t evaluations() const;
  [[nodiscard]] std::size_t flow_runs() const { return context_->flow_runs(); }

private:
  struct Shape;   // one distinct training workload (model, layout, batch), shared by its jobs
  struct Priced;  // one shape on one list of GPUs, alone
  const Priced& priced(std::size_t job, const Placement& where);
  const Priced& priced_on(std::size_t shape, std::vector<long> gpus);
  std::vector<long> gpus_of(std::size_t job, const Placement& where) const;

  const topo::Topology& t_;
  std::vector<long> first_gpu_;        // per scheduler node
  std::vector<std::size_t> shape_of_;  // per job; npos when not modelled
  std::vector<std::unique_ptr<Shape>> shapes_;
  std::unique_ptr<work::TrainingContext> context_;
  std::map<std::pair<std::size_t, std::vector<long>>, std::unique_ptr<Priced>> priced_;
  // Step time beside neighbours, by this job's pricing and the neighbours' (sorted) that share
  // its links.
  std::map<std::vector<const Priced*>, double> shared_;
};

}  // namespace gf::sched
