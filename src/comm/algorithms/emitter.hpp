#pragma once
// Where an algorithm's flows go: each edge between two ranks becomes a flow on the route NCCL's
// transport takes, scaled by the protocol's wire overhead, filtered to one node's edges for the
// closed form, and checked against the per-connection rate of its transport.
#include <algorithm>
#include <cmath>
#include <span>

#include "comm/communicator.hpp"
#include "comm/pattern.hpp"

namespace gf::comm {

class Emitter {
public:
  Emitter(const Communicator& c, double inflate, PatternScope scope, const FlowSink& sink, bool simplex)
      : c_(c), inflate_(inflate), scope_(scope), sink_(sink), simplex_(simplex) {}

  // One flow from rank a to rank b over the topology's route.
  void edge(long a, long b, double bytes, int nic_choice = 0) {
    if (a == b || bytes <= 0) return;
    if (scope_.only_node >= 0 && c_.node_of(a) != scope_.only_node && c_.node_of(b) != scope_.only_node) return;
    const topo::Route r = c_.route(a, b, nic_choice);
    const double wire = bytes * inflate_;
    if (scope_.connection_time != nullptr) {
      const double rate = c_.connection_rate(a, b, simplex_);
      if (std::isfinite(rate)) *scope_.connection_time = std::max(*scope_.connection_time, wire / rate);
    }
    sink_(r.links, wire);
  }

  // The node the closed form looks at, or -1 for every node.
  [[nodiscard]] long only_node() const { return scope_.only_node; }

  // A flow on a path given link by link (NVSwitch and SHARP legs that are not rank-to-rank routes).
  void raw(long node, std::span<const topo::LinkId> path, double bytes) {
    if (scope_.only_node >= 0 && node != scope_.only_node) return;
    sink_(path, bytes * inflate_);
  }

private:
  const Communicator& c_;
  double inflate_;
  PatternScope scope_;
  const FlowSink& sink_;
  bool simplex_;
};

}  // namespace gf::comm
