#pragma once
// The pieces of gpufabric's time model that several algorithms share: NCCL's latency figures
// on this communicator's links, a ring's steps, and the protocol factors of ring-shaped kernels.
#include <cmath>

#include "comm/collective.hpp"

namespace gf::comm {

class Communicator;

// One call's latency figures, microseconds: NCCL's base and its per-hop figures inside the
// node, across the network, and on NVLink.
struct LatencyTerms {
  double base = 0;
  double intra = 0;   // a step inside the node (at least the network post overhead across nodes)
  double inter = 0;   // a step across the network, with the endpoint's extra latency
  double nvlink = 0;  // a hop on NVLink
};

// The base from `base_row`'s row of NCCL's tables and the hops from `hop_row`'s, so that an
// algorithm without figures of its own (or whose figure stands for something modelled
// elsewhere, like Tree/Simple's chunk latency) borrows another's.
LatencyTerms latency_terms(const Communicator& c, Proto p, Algo base_row, Algo hop_row);

// ceil(log2(n)), 0 for n <= 1: the levels of a binary tree or a doubling algorithm.
inline double log2_ceil(long n) { return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n))); }

// A ring's latency, microseconds (Ring and point-to-point): one step per hop around the ring,
// those that cross the network at its figure.
double ring_latency_us(const Communicator& c, Op op, const LatencyTerms& t);

// NCCL's bus-bandwidth factor of protocol `p` for ring-shaped kernels (Ring and PAT).
double ring_protocol_factor(const Communicator& c, Op op, Proto p);

}  // namespace gf::comm
