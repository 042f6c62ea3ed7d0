#include "sched/policies/scores.hpp"

namespace gf::sched {

double first_fit_score(const PodPlacement& o) {
  return static_cast<double>(o.node) * 1e3 + (o.gpus.empty() ? 0 : o.gpus.front()) * 10.0 + std::max(o.mig_start, 0);
}

double best_fit_score(const PodPlacement& o, const PodRequest& pod, const ClusterState& c) {
  const Node& n = c.node(o.node);
  double node_left = static_cast<double>(n.free_milli_total());
  double gpu_left = 0;
  if (o.mig_profile >= 0) {
    // MIG: the GPU with the fewest compute slices left after it.
    const auto& s = n.gpus[static_cast<std::size_t>(o.gpus.front())];
    const int used = s.mig ? s.mig->compute_used() : 0;
    gpu_left = 7 - used - n.mig_table->profiles[static_cast<std::size_t>(o.mig_profile)].compute_slices;
  } else {
    node_left -= static_cast<double>(o.milli) * static_cast<double>(o.gpus.size());
    if (!o.gpus.empty()) gpu_left = n.gpus[static_cast<std::size_t>(o.gpus.front())].free_milli - o.milli;
  }
  const double cpu_left =
      n.cpu_milli > 0 ? static_cast<double>(n.cpu_free - pod.cpu_milli) / static_cast<double>(n.cpu_milli) : 0;
  return node_left * 1e4 + gpu_left * 10 + cpu_left;
}

std::uint64_t shuffle_key(std::uint64_t key) {
  std::uint64_t x = key + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace gf::sched
