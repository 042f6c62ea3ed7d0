#pragma once
// A dependency graph of flows (bytes over a path of links) and timed tasks (compute, fixed
// delays). The flow engine runs it; collectives and, later, training steps are built as such
// graphs. The engine knows links only by id and capacity: nothing of GPUs or collectives.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace gf::sim {

using LinkId = std::uint32_t;
using TaskId = std::uint32_t;

class TaskGraph {
public:
  // A transfer of `bytes` over `path`; it finishes `latency` after its last byte leaves.
  // `weight` > 1 stands for that many identical flows moving together (they get that many
  // max-min shares), which keeps symmetric patterns small without changing the result.
  TaskId add_flow(std::span<const LinkId> path, Bytes bytes, Seconds latency, double weight = 1.0);
  // A task that uses several resources at once in fixed proportions: `amount` units of work,
  // each unit taking `demand[i]` of resource `resources[i]` (capacities in the same span as
  // links: a GPU's compute in GPU-seconds per second, its HBM likewise). A kernel whose compute
  // alone would take Tc and memory traffic Tm is amount 1 with demands {Tc, Tm} on its GPU's
  // compute and HBM resources: alone it takes max(Tc, Tm), the roofline; beside other kernels
  // on the same GPU it shares them max-min fairly. Links and resources are one id space.
  TaskId add_work(std::span<const LinkId> resources, std::span<const double> demand, double amount,
                  double weight = 1.0);
  // A task that takes a fixed time and uses no link.
  TaskId add_delay(Seconds duration);
  // `task` starts only after `before` has finished.
  void add_dependency(TaskId before, TaskId task);

  [[nodiscard]] std::size_t size() const { return kind_.size(); }
  [[nodiscard]] bool is_flow(TaskId t) const { return kind_[t] == Kind::flow; }
  [[nodiscard]] std::span<const LinkId> path(TaskId t) const {
    return {path_links_.data() + path_begin_[t], path_begin_[t + 1] - path_begin_[t]};
  }
  // Resource used per unit of the task's amount on each element of its path (1 for a flow's
  // bytes on its links).
  [[nodiscard]] double demand(TaskId t, std::size_t i) const {
    return demand_.empty() ? 1.0 : demand_[path_begin_[t] + i];
  }
  // A name for traces ("fwd L12 mb3", "allreduce bucket 4"); empty unless set.
  void set_label(TaskId t, std::string label);
  [[nodiscard]] const std::string& label(TaskId t) const;
  [[nodiscard]] double bytes(TaskId t) const { return amount_[t]; }     // flows
  [[nodiscard]] double duration(TaskId t) const { return amount_[t]; }  // delays, seconds
  [[nodiscard]] double latency(TaskId t) const { return latency_[t]; }
  [[nodiscard]] double weight(TaskId t) const { return weight_[t]; }
  [[nodiscard]] std::uint32_t dependency_count(TaskId t) const { return deps_[t]; }
  [[nodiscard]] std::span<const TaskId> successors(TaskId t) const { return successors_[t]; }
  void reserve(std::size_t tasks, std::size_t path_links);

private:
  enum class Kind : std::uint8_t { flow, delay };
  std::vector<Kind> kind_;
  std::vector<double> amount_;
  std::vector<double> latency_;
  std::vector<double> weight_;
  std::vector<std::size_t> path_begin_{0};
  std::vector<LinkId> path_links_;
  std::vector<double> demand_;  // per path element; empty while every demand is 1
  std::vector<std::string> labels_;
  std::vector<std::uint32_t> deps_;
  std::vector<std::vector<TaskId>> successors_;
};

}  // namespace gf::sim
