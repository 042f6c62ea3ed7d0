#pragma once
// One collective as tasks of a task graph, so that a caller (a training step, several groups
// at once) can start it after its inputs, overlap it with compute, and let it share links with
// other collectives in the flow engine.
//
// The tasks: a delay for the latency (the launch and NCCL's per-step figures); the algorithm's
// flows, phase after phase, at the protocol's wire bytes; beside them a delay for what no
// shared link explains (per-connection limits, NCCL's LL cap, a point-to-point channel's copy
// rate); then a delay for the chunk pipeline's fill. Alone in a graph it takes exactly the
// time `predict` gives with the flow engine; with other traffic on its links it takes longer.
#include "comm/model.hpp"
#include "sim/task_graph.hpp"

namespace gf::comm {

struct PlacedCollective {
  sim::TaskId entry = 0;  // its start is the collective's start: make it depend on the inputs
  sim::TaskId exit = 0;   // its end is the collective's end: make the consumers depend on it
  // NCCL's choice of algorithm and protocol, and gpufabric's time for it with the links to
  // itself (the choice does not depend on what else runs: NCCL's tuner does not see it).
  CollectiveResult alone;
  std::size_t flows = 0;  // flow tasks added
};

// Adds `req` on `c` to `graph`. The graph is run with `sim::simulate(graph, c.capacity())`;
// collectives of several communicators may share one graph when their communicators are on
// the same topology with the same NCCL parameters (the capacities are the same then).
// The flows cover every rank, so this costs what the flow engine costs (use it for the groups
// of a step, not for one collective across 65,536 GPUs: `predict` has the closed form).
PlacedCollective add_collective(sim::TaskGraph& graph, const Communicator& c, const CollectiveRequest& req);

}  // namespace gf::comm
