// Dot product, the FGD paper's DotProd baseline as its authors ran it (data/validation/
// scheduling_fgd.yaml, definitions.baselines.DotProd): the node's free CPU and GPU, each over
// the largest node's (128 CPUs, 8 GPUs), dotted with the pod's request on the same scale; as
// a kube-scheduler score, floor(100 x (1 - dot / 2)), the highest winning, so the node with the
// SMALLER product wins (the opposite of Tetris' alignment: it packs). Ties at random (a fixed
// node order here); inside the node, the GPU with the least left that fits.
#include <cmath>
#include <cstdint>

#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

constexpr double kMaxCpuMilli = 128'000;  // the artifact's MaxSpecCpu
constexpr double kMaxGpuMilli = 8'000;    // the artifact's MaxSpecGpu

class DotProduct final : public Policy {
public:
  std::string name() const override { return "dot-product"; }
  std::string summary() const override {
    return "smallest dot product of free CPU/GPU and the request (the FGD paper's DotProd baseline)";
  }
  double score(const PodPlacement& o, const PodRequest& pod, const PlacementContext& c) const override {
    const Node& n = c.cluster.node(o.node);
    const double gpu_req = static_cast<double>(o.milli) * static_cast<double>(o.gpus.size());
    const double dot =
        static_cast<double>(n.cpu_free) / kMaxCpuMilli * static_cast<double>(pod.cpu_milli) / kMaxCpuMilli +
        static_cast<double>(n.free_milli_total()) / kMaxGpuMilli * gpu_req / kMaxGpuMilli;
    const double node_score = std::floor(100 * (1 - dot / 2));
    const double gpu_left = o.gpus.empty() ? 0 : n.gpus[static_cast<std::size_t>(o.gpus.front())].free_milli - o.milli;
    return -node_score + static_cast<double>(shuffle_key(static_cast<std::uint64_t>(o.node)) % 1'000'000) * 1e-8 +
           gpu_left * 1e-12;
  }
};

const bool registered = register_policy("dot-product", [] { return std::make_unique<DotProduct>(); });

}  // namespace
}  // namespace gf::sched
