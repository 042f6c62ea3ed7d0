#pragma once
// The traffic of one collective as concurrent flows between ranks. NCCL pipelines every
// algorithm in chunks, so in steady state all of an algorithm's edges carry data at once:
// each edge is one flow carrying all the bytes that edge moves during the collective.
#include <functional>
#include <span>

#include "comm/collective.hpp"
#include "comm/communicator.hpp"

namespace gf::comm {

using FlowSink = std::function<void(std::span<const topo::LinkId> path, double bytes)>;

struct PatternScope {
  long only_node = -1;  // >= 0: emit only edges with an end on this node (for the closed form)
  int phase = 0;        // for algorithms in several phases, the one to emit
  long root = 0;        // broadcast and reduce: the rank the chain starts (ends) at
  // When set, raised to the longest time any one connection needs at its transport's
  // per-connection rate (Communicator::connection_rate): a bound the links alone do not give.
  double* connection_time = nullptr;
  // sendrecv: only this rank sends (to the next; one pipeline stage's send to its neighbour),
  // not every rank to the next as nccl-tests' sendrecv does. -1: every rank.
  long sender = -1;
};

// Phases that run one after another (each phase's flows run concurrently).
int phases(Op op, Algo algo);

// The node the closed form looks at: one that carries as much as any (an interior node of the
// double binary tree for tree-based algorithms, node 0 otherwise).
long representative_node(const Communicator& c, Algo algo);

// Emits the flows of `op` with `algo` for a buffer of `size` bytes; every flow's bytes are
// multiplied by `inflate` (the protocol's wire overhead).
void emit_pattern(const Communicator& c, Op op, Algo algo, double size, double inflate, PatternScope scope,
                  const FlowSink& sink);

// Number of channels NCCL would run for this communicator (for display).
int channels(const Communicator& c, Algo algo);

}  // namespace gf::comm
