// Least attained service with preemption, in the spirit of Tiresias (Gu et al., NSDI '19): jobs
// are served in priority queues by the GPU-seconds they have already received (2D-LAS), a job
// waiting in a higher queue preempts running jobs of lower ones (they checkpoint and requeue),
// and a job starved long enough is promoted. The queue thresholds and starvation rule are the
// simulator's (sched/simulator.hpp, LasOptions). Placement: consolidated, best fit.
#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class Tiresias final : public Policy {
public:
  std::string name() const override { return "tiresias"; }
  std::string summary() const override {
    return "least attained GPU-seconds first in priority queues, preempting lower queues (Tiresias 2D-LAS, NSDI "
           "'19); consolidated best fit";
  }
  Queueing queueing() const override { return Queueing::las; }
  bool local_gpus() const override { return true; }
  double score(const PodPlacement& o, const PodRequest& pod, const PlacementContext& c) const override {
    return best_fit_score(o, pod, c.cluster);
  }
};

const bool registered = register_policy("tiresias", [] { return std::make_unique<Tiresias>(); });

}  // namespace
}  // namespace gf::sched
