// Best fit: the node, then the GPU, with the least left after the pod goes there, so the
// emptier nodes stay whole for larger requests (the FGD paper's BestFit baseline in spirit).
#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class BestFit final : public Policy {
public:
  std::string name() const override { return "best-fit"; }
  std::string summary() const override {
    return "the node and GPU left with the least free capacity (then CPU); kube-scheduler's queue";
  }
  double score(const PodPlacement& o, const PodRequest& pod, const PlacementContext& c) const override {
    return best_fit_score(o, pod, c.cluster);
  }
};

const bool registered = register_policy("best-fit", [] { return std::make_unique<BestFit>(); });

}  // namespace
}  // namespace gf::sched
