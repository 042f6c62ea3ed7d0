// Strict FIFO with first fit: jobs start in arrival order and the first that does not fit holds
// up every job behind it (Slurm's builtin scheduler without backfill; a gang queue).
#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class Fifo final : public Policy {
public:
  std::string name() const override { return "fifo"; }
  std::string summary() const override {
    return "strict arrival order, first fit; the first job that does not fit blocks the queue";
  }
  Queueing queueing() const override { return Queueing::fifo; }
  double score(const PodPlacement& o, const PodRequest&, const PlacementContext&) const override {
    return first_fit_score(o);
  }
};

const bool registered = register_policy("fifo", [] { return std::make_unique<Fifo>(); });

}  // namespace
}  // namespace gf::sched
