// EASY backfill (Lifka, 1995; Slurm's sched/backfill): jobs start in arrival order; when the
// first does not fit, it gets a reservation at the earliest time enough GPUs free up, and later
// jobs may start now if they end before it or leave it enough GPUs. Best fit places them.
#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class Backfill final : public Policy {
public:
  std::string name() const override { return "backfill"; }
  std::string summary() const override {
    return "arrival order with EASY backfill around the first waiting job's reservation; best fit";
  }
  Queueing queueing() const override { return Queueing::backfill; }
  double score(const PodPlacement& o, const PodRequest& pod, const PlacementContext& c) const override {
    return best_fit_score(o, pod, c.cluster);
  }
};

const bool registered = register_policy("backfill", [] { return std::make_unique<Backfill>(); });

}  // namespace
}  // namespace gf::sched
