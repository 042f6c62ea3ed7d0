#pragma once
// Scores several policies share.
#include "sched/policy.hpp"

namespace gf::sched {

// First fit: the lowest-numbered node, then GPU, then MIG start.
double first_fit_score(const PodPlacement& o);
// Best fit: the node left with the least free GPU capacity, then the GPU left with the least,
// then the least CPU (the tightest fit, so larger holes stay whole).
double best_fit_score(const PodPlacement& o, const PodRequest& pod, const ClusterState& c);

}  // namespace gf::sched
