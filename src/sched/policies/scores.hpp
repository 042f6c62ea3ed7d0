#pragma once
// Scores several policies share.
#include <cstdint>

#include "sched/policy.hpp"

namespace gf::sched {

// First fit: the lowest-numbered node, then GPU, then MIG start.
double first_fit_score(const PodPlacement& o);
// Best fit: the node left with the least free GPU capacity, then the GPU left with the least,
// then the least CPU (the tightest fit, so larger holes stay whole).
double best_fit_score(const PodPlacement& o, const PodRequest& pod, const ClusterState& c);

// A fixed pseudo-random shuffle of 64-bit keys (splitmix64's finaliser): random fit's seeded
// choice, and the node order that breaks ties in fgd and dot-product without favouring the
// low-numbered nodes as first fit does.
std::uint64_t shuffle_key(std::uint64_t key);

}  // namespace gf::sched
