#include "sim/task_graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace gf::sim {

TaskId TaskGraph::add_flow(std::span<const LinkId> path, Bytes bytes, Seconds latency, double weight) {
  const auto id = static_cast<TaskId>(kind_.size());
  kind_.push_back(Kind::flow);
  amount_.push_back(bytes.value());
  latency_.push_back(latency.value());
  weight_.push_back(weight);
  path_links_.insert(path_links_.end(), path.begin(), path.end());
  if (!demand_.empty()) demand_.resize(path_links_.size(), 1.0);
  path_begin_.push_back(path_links_.size());
  deps_.push_back(0);
  successors_.emplace_back();
  return id;
}

TaskId TaskGraph::add_work(std::span<const LinkId> resources, std::span<const double> demand, double amount,
                           double weight) {
  if (demand.size() != resources.size()) throw std::invalid_argument("add_work: one demand per resource");
  const TaskId id = add_flow(resources, Bytes(amount), Seconds(0), weight);
  demand_.resize(path_links_.size(), 1.0);  // the flows so far take 1 per byte
  std::copy(demand.begin(), demand.end(), demand_.end() - static_cast<std::ptrdiff_t>(demand.size()));
  return id;
}

void TaskGraph::set_label(TaskId t, std::string label) {
  if (labels_.size() <= t) labels_.resize(kind_.size());
  labels_[t] = std::move(label);
}

const std::string& TaskGraph::label(TaskId t) const {
  static const std::string none;
  return t < labels_.size() ? labels_[t] : none;
}

TaskId TaskGraph::add_delay(Seconds duration) {
  const auto id = static_cast<TaskId>(kind_.size());
  kind_.push_back(Kind::delay);
  amount_.push_back(duration.value());
  latency_.push_back(0);
  weight_.push_back(0);
  path_begin_.push_back(path_links_.size());
  deps_.push_back(0);
  successors_.emplace_back();
  return id;
}

void TaskGraph::add_dependency(TaskId before, TaskId task) {
  successors_[before].push_back(task);
  ++deps_[task];
}

void TaskGraph::reserve(std::size_t tasks, std::size_t path_links) {
  kind_.reserve(tasks);
  amount_.reserve(tasks);
  latency_.reserve(tasks);
  weight_.reserve(tasks);
  path_begin_.reserve(tasks + 1);
  deps_.reserve(tasks);
  successors_.reserve(tasks);
  path_links_.reserve(path_links);
}

}  // namespace gf::sim
