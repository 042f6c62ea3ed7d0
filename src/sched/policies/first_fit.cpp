// First fit with Kubernetes' queue: each pod goes to the lowest-numbered node (and GPU) where it
// fits; a pod that fits nowhere waits and does not hold up the pods behind it.
#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class FirstFit final : public Policy {
public:
  std::string name() const override { return "first-fit"; }
  std::string summary() const override {
    return "lowest-numbered node and GPU that fit; pods that fit nowhere wait without blocking (kube-scheduler's "
           "queue)";
  }
  double score(const PodPlacement& o, const PodRequest&, const PlacementContext&) const override {
    return first_fit_score(o);
  }
};

const bool registered = register_policy("first-fit", [] { return std::make_unique<FirstFit>(); });

}  // namespace
}  // namespace gf::sched
