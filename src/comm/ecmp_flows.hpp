#pragma once
// A collective's flows as an ECMP fabric places them. Routes between leaves use the uplink
// bundles (traffic spread ideally); where the network's switches hash instead (RoCE's default),
// every connection is cut into its queue pairs and each queue pair is put on the one uplink
// cable its hash picks, so that some uplinks carry two or three flows while others idle.
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/pattern.hpp"

namespace gf::comm {

// Whether flows between leaves are placed by hash: the network hashes (hw::LoadBalancing::ecmp),
// the fabric is a fat-tree with an upper tier, and the ranks span more than one node.
[[nodiscard]] bool ecmp_hashed(const Communicator& c);

// Flows (5-tuples) one connection puts on the wire: NCCL_IB_QPS_PER_CONNECTION queue pairs,
// default 1 (NCCL_PARAM(IbQpsPerConn, "IB_QPS_PER_CONNECTION", 1), src/transport/net_ib.cc);
// NCCL posts each request on one of them in turn (NCCL_IB_SPLIT_DATA_ON_QPS=0), so each
// carries an equal share. A socket connection: its sockets.
[[nodiscard]] int flows_per_connection(const Communicator& c);

// Wraps a sink: each flow that leaves a leaf becomes flows_per_connection() flows of equal
// bytes, each on the uplink and downlink cables its hash picks. The hash takes the flow's path
// (its end points), how many times the same path was seen before in this placement (the
// channel: each channel is its own connection with its own queue pairs), the queue pair, and
// the communicator's ECMP salt. Flows inside a leaf pass through unchanged.
class EcmpPlacer {
public:
  EcmpPlacer(const Communicator& c, FlowSink inner);
  void operator()(std::span<const topo::LinkId> path, double bytes);

private:
  const Communicator& c_;
  FlowSink inner_;
  int qps_;
  std::map<std::vector<topo::LinkId>, std::uint64_t> seen_;
  std::vector<topo::LinkId> hashed_;
};

}  // namespace gf::comm
