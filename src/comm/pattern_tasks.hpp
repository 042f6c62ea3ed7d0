#pragma once
// A collective's traffic as flows of a task graph, phase after phase: what the flow engine
// prices for one collective alone, and what a caller (a training step) puts beside its compute
// and other collectives, so that flows sharing links slow each other down.
#include <optional>
#include <vector>

#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "sim/task_graph.hpp"

namespace gf::comm {

struct PatternTasks {
  // The tasks whose ends end the traffic (the last phase's flows); empty when nothing moves.
  std::vector<sim::TaskId> last;
  // The longest time the per-connection limits need (SHM channels, TCP streams), phases added:
  // a bound that no shared link gives, so the caller puts it beside the flows.
  double connection_seconds = 0;
};

// Adds the flows of `op` with `algo` on `size` bytes, every flow's bytes times `inflate` (the
// protocol's wire overhead). Flows with the same path and size (the same edge in several
// channels) are one weighted flow: max-min gives it the shares of all of them. Each phase
// starts when the previous one has ended; the first waits for `start` when given.
PatternTasks add_pattern_flows(sim::TaskGraph& graph, const Communicator& c, Op op, Algo algo, double size,
                               double inflate, long root, std::optional<sim::TaskId> start, long sender = -1);

}  // namespace gf::comm
