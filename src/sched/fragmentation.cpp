#include "sched/fragmentation.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace gf::sched {

TargetWorkload target_workload(const std::vector<Job>& jobs, double coverage) {
  // A class is a pod's CPU request, GPU ask and allowed models (memory is not part of it, as in
  // the FGD artifact's typical pods), weighted by its pods.
  using Key = std::tuple<long, int, int, std::string, std::vector<std::string>>;
  std::map<Key, double> by;
  double total = 0;
  for (const auto& j : jobs) {
    // Tasks without GPUs are left out: every free GPU is a fragment to them wherever a pod goes,
    // the same for every choice, so they shift the measure without changing FGD's decisions.
    if (!j.pod.wants_gpu()) continue;
    by[{j.pod.cpu_milli, j.pod.gpus, j.pod.share_milli, j.pod.mig, j.pod.gpu_models}] += j.pods;
    total += j.pods;
  }
  std::vector<std::pair<double, Key>> ranked;
  for (const auto& [k, n] : by) ranked.emplace_back(n, k);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  TargetWorkload w;
  double kept = 0;
  for (const auto& [n, k] : ranked) {
    if (total > 0 && kept / total >= coverage) break;
    TaskClass c;
    std::tie(c.pod.cpu_milli, c.pod.gpus, c.pod.share_milli, c.pod.mig, c.pod.gpu_models) = k;
    c.weight = n;
    kept += n;
    w.classes.push_back(std::move(c));
  }
  for (auto& c : w.classes) c.weight /= kept;
  return w;
}

NodeView view(const Node& n) {
  NodeView v;
  v.node = &n;
  v.cpu_free = n.cpu_free;
  v.memory_free = n.memory_free;
  v.gpus = static_cast<int>(std::min<std::size_t>(n.gpus.size(), 64));
  for (int g = 0; g < v.gpus; ++g) {
    const auto& s = n.gpus[static_cast<std::size_t>(g)];
    v.free[static_cast<std::size_t>(g)] = s.mig ? 0 : s.free_milli;
  }
  return v;
}

double fragmentation(const NodeView& v, const TargetWorkload& w) {
  long free_total = 0, partial = 0;
  int whole = 0;
  for (int g = 0; g < v.gpus; ++g) {
    const int f = v.free[static_cast<std::size_t>(g)];
    free_total += f;
    if (f == 1000)
      ++whole;
    else
      partial += f;
  }
  if (free_total == 0) return 0;
  const Node& n = *v.node;
  double expected = 0;
  for (const auto& c : w.classes) {
    const PodRequest& p = c.pod;
    // A task without GPUs cannot use any of the node's free GPU capacity.
    bool runs =
        p.wants_gpu() && v.cpu_free >= p.cpu_milli &&
        (p.gpu_models.empty() || std::find(p.gpu_models.begin(), p.gpu_models.end(), n.model) != p.gpu_models.end());
    long stranded = 0;
    if (runs && p.gpus > 0) {
      runs = whole >= p.gpus;
      stranded = partial;
    } else if (runs && p.share_milli > 0) {
      bool any = false;
      for (int g = 0; g < v.gpus; ++g) {
        const int f = v.free[static_cast<std::size_t>(g)];
        if (f >= p.share_milli)
          any = true;
        else
          stranded += f;
      }
      runs = any;
    } else if (runs && !p.mig.empty()) {
      // MIG tasks use GPUs in MIG mode or idle ones; partly shared GPUs are lost to them.
      runs = n.mig_table && n.mig_table->find(p.mig) && whole > 0;
      stranded = partial;
    }
    expected += c.weight * static_cast<double>(runs ? stranded : free_total);
  }
  return expected;
}

double FragmentationMeter::gpus(const ClusterState& c) {
  const auto n = c.nodes().size();
  if (seen_.size() != n) {
    seen_.assign(n, ~std::uint64_t{0});
    per_node_.assign(n, 0);
    total_ = 0;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = c.node_version(static_cast<int>(i));
    if (seen_[i] == v) continue;
    seen_[i] = v;
    const double f = fragmentation(view(c.nodes()[i]), w_);
    total_ += f - per_node_[i];
    per_node_[i] = f;
  }
  return total_ / 1000.0;
}

}  // namespace gf::sched
