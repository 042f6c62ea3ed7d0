#pragma once
// The FGD paper's experiment (Weng et al., USENIX ATC '23, section 6; the protocol as the
// authors' simulator runs it, data/validation/scheduling_fgd.yaml): the trace's pods, in a
// seeded random order and then followed by random copies of them, arrive one after another on
// an empty cluster until their GPU demand reaches a multiple of its capacity; pods never leave,
// and a pod that fits nowhere is dropped. What is left unallocated as the cluster fills shows
// how well a policy packs. Repeated with several seeds; medians and quartiles reported.
#include <cstdint>
#include <string>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/job.hpp"
#include "sched/policy.hpp"

namespace gf::sched {

struct FillOptions {
  double up_to = 1.3;  // arrived GPU demand, as a multiple of the cluster's GPUs
  int repeats = 10;
  std::uint64_t seed = 42;  // repeat r uses seed + r (the artifact's 42..51)
  std::vector<double> report_at{0.5, 0.8, 0.9, 0.95, 1.0, 1.1, 1.2, 1.3};
};

struct FillPoint {
  double arrived = 0;                                                       // arrived GPU demand / capacity
  double unallocated_median = 0, unallocated_p25 = 0, unallocated_p75 = 0;  // % of the GPUs
  double fragmented_median = 0;                                             // % of the GPUs, FGD's measure
  double failed_pods_median = 0;                                            // GPU pods dropped so far
};

struct FillCurve {
  std::string policy;
  std::vector<FillPoint> points;
};

FillCurve fill_experiment(const ClusterState& cluster, const std::vector<Job>& pods, const Policy& policy,
                          const FillOptions& options = {});

}  // namespace gf::sched
