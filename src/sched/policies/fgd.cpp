// Fragmentation Gradient Descent (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
// Workloads with Fragmentation Gradient Descent", USENIX ATC '23): each pod goes where the
// cluster's expected fragmentation under the trace's own mix of tasks grows least
// (fragmentation.hpp). Written from the paper's description and the protocol notes in
// data/validation/scheduling_fgd.yaml.
//
// As a kube-scheduler score plugin FGD must give each node a whole number from 0 to 100
// (the framework's MaxNodeScore); the authors map the fragmentation gain through a sigmoid,
// floor(100 * sigmoid(gain in GPUs)), and kube-scheduler picks among the nodes that tie at the
// top at random. Both matter: on the PAI 2023 trace, ranking by the exact gain (no ties) leaves
// about a fifth more GPUs unallocated at full load than the coarse score with random ties
// (README, "gpufabric schedule"; 6.1% against 5.1%), probably because the coarse score lets
// near-equal choices go by the tie order instead of chasing differences of a few thousandths of
// a GPU. So this policy keeps the integer score,
// with a fixed pseudo-random node order for the ties (deterministic runs), then the lowest GPU.
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

class Fgd final : public Policy {
public:
  std::string name() const override { return "fgd"; }
  std::string summary() const override {
    return "where the expected GPU fragmentation under the workload's task mix grows least (FGD, ATC '23)";
  }
  double score(const PodPlacement& o, const PodRequest& pod, const PlacementContext& c) const override {
    const Node& n = c.cluster.node(o.node);
    // A node's fragmentation before any placement changes only when the node does.
    auto& before = before_[o.node];
    const auto version = c.cluster.node_version(o.node);
    if (before.version != version + 1) before = {version + 1, fragmentation(view(n), c.workload)};
    NodeView after = view(n);
    after.cpu_free -= pod.cpu_milli;
    after.memory_free -= pod.memory_mib;
    for (int g : o.gpus) {
      if (o.mig_profile >= 0)
        after.free[static_cast<std::size_t>(g)] = 0;  // a GPU in MIG mode serves no shares
      else
        after.free[static_cast<std::size_t>(g)] -= o.milli;
    }
    const double gain_gpus = (before.value - fragmentation(after, c.workload)) / 1000.0;
    const double node_score = std::floor(100.0 / (1.0 + std::exp(-gain_gpus)));
    // Highest score first; ties by the fixed node order, then the lowest GPU.
    const double tie = static_cast<double>(shuffle_key(static_cast<std::uint64_t>(o.node)) % 1'000'000) * 1e-7;
    return -node_score + tie * 1e-1 + (o.gpus.empty() ? 0 : o.gpus.front()) * 1e-9;
  }

private:
  struct Cached {
    std::uint64_t version = 0;  // the node's version + 1 (0: never computed)
    double value = 0;
  };
  mutable std::unordered_map<int, Cached> before_;
};

const bool registered = register_policy("fgd", [] { return std::make_unique<Fgd>(); });

}  // namespace
}  // namespace gf::sched
