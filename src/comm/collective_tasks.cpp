#include "comm/collective_tasks.hpp"

#include <algorithm>

#include "comm/pattern_tasks.hpp"

namespace gf::comm {

PlacedCollective add_collective(sim::TaskGraph& graph, const Communicator& c, const CollectiveRequest& req) {
  PlacedCollective placed;
  CollectiveRequest chosen = req;
  chosen.engine = Engine::flow;  // the graph runs in the flow engine: time the choice there
  placed.alone = predict(c, chosen);
  const Algo algo = placed.alone.algo;
  const Proto proto = placed.alone.proto;
  const std::size_t before = graph.size();

  placed.entry = graph.add_delay(placed.alone.latency);
  const sim::TaskId data_done = graph.add_delay(Seconds(0));
  if (req.size > 0 && c.ranks() >= 2) {
    const WireShape shape = wire_shape(c, req, algo, proto);
    const long root = req.op == Op::broadcast || req.op == Op::reduce ? req.root : 0;
    const PatternTasks traffic = add_pattern_flows(graph, c, req.op, algo, req.size, shape.inflate, root, placed.entry,
                                                   req.op == Op::sendrecv ? req.sender : -1);
    for (const auto t : traffic.last) graph.add_dependency(t, data_done);
    // What no shared link explains runs beside the flows: the data takes at least this long.
    // (The per-connection time was emitted at the inflated bytes already.)
    const double floor = std::max(traffic.connection_seconds, shape.floor.value());
    if (floor > 0) {
      const sim::TaskId bound = graph.add_delay(Seconds(floor));
      graph.add_dependency(placed.entry, bound);
      graph.add_dependency(bound, data_done);
    }
    if (traffic.last.empty() && !(floor > 0)) graph.add_dependency(placed.entry, data_done);
  } else {
    graph.add_dependency(placed.entry, data_done);
  }
  placed.exit = graph.add_delay(placed.alone.fill);
  graph.add_dependency(data_done, placed.exit);
  for (std::size_t t = before; t < graph.size(); ++t)
    if (graph.is_flow(static_cast<sim::TaskId>(t))) ++placed.flows;
  return placed;
}

}  // namespace gf::comm
