#pragma once
// Discrete-event flow-level simulation. Active flows share every link max-min fairly; when
// flows start or end, only the flows connected to them through shared links (their
// component) get new rates. Events at the same instant are handled as one batch, so the many
// flows of a symmetric collective that finish together cost one recomputation.
#include <span>
#include <vector>

#include "core/units.hpp"
#include "sim/task_graph.hpp"

namespace gf::sim {

struct SimResult {
  Seconds makespan;
  std::vector<double> start;   // seconds, per task
  std::vector<double> finish;  // seconds, per task
  std::size_t events = 0;
  std::size_t rate_recomputations = 0;
};

// `capacity[l]` is link l's rate in bytes per second. Every link on a flow's path must have a
// positive capacity.
SimResult simulate(const TaskGraph& graph, std::span<const double> capacity);

}  // namespace gf::sim
