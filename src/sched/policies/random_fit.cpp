// Random fit: any node and GPU that fit, picked by a fixed hash (the same inputs give the same
// choices): the baseline every packing policy should beat.
#include <cstdint>

#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class RandomFit final : public Policy {
public:
  std::string name() const override { return "random-fit"; }
  std::string summary() const override { return "any node and GPU that fit, chosen pseudo-randomly (seeded)"; }
  double score(const PodPlacement& o, const PodRequest&, const PlacementContext& c) const override {
    const std::uint64_t key = (static_cast<std::uint64_t>(o.node) << 20) ^
                              (static_cast<std::uint64_t>(o.gpus.empty() ? 0 : o.gpus.front()) << 8) ^
                              (c.cluster.version() << 32);
    return static_cast<double>(shuffle_key(key) >> 11);
  }
};

const bool registered = register_policy("random-fit", [] { return std::make_unique<RandomFit>(); });

}  // namespace
}  // namespace gf::sched
