#include "work/train_groups.hpp"

#include <algorithm>

namespace gf::work {

std::vector<long> on_gpus(std::vector<long> ranks, const std::vector<long>& placement) {
  if (!placement.empty())
    for (long& r : ranks) r = placement[static_cast<std::size_t>(r)];
  return ranks;
}

std::vector<std::vector<long>> on_gpus(std::vector<std::vector<long>> groups, const std::vector<long>& placement) {
  if (!placement.empty())
    for (auto& g : groups) g = on_gpus(std::move(g), placement);
  return groups;
}

std::vector<std::vector<long>> concurrent_groups(const std::vector<std::vector<long>>& all, long gpus_per_node) {
  std::vector<std::vector<long>> out{all.front()};
  std::vector<long> nodes;
  for (long g : all.front()) nodes.push_back(g / gpus_per_node);
  std::sort(nodes.begin(), nodes.end());
  for (std::size_t i = 1; i < all.size(); ++i) {
    const bool shares = std::any_of(all[i].begin(), all[i].end(), [&](long g) {
      return std::binary_search(nodes.begin(), nodes.end(), g / gpus_per_node);
    });
    if (shares) out.push_back(all[i]);
  }
  return out;
}

std::vector<std::vector<long>> gradient_groups(const ParallelLayout& l, const RankOrder& order) {
  auto dp = groups(l, order, Axis::dp);
  if (l.cp <= 1) return dp;
  std::vector<std::vector<long>> out;
  std::vector<bool> seen(static_cast<std::size_t>(l.gpus()), false);
  for (const auto& g : dp) {
    if (seen[static_cast<std::size_t>(g.front())]) continue;
    std::vector<long> joined;
    for (long gpu : g)
      for (long peer : group_of(l, order, Axis::cp, gpu)) joined.push_back(peer);
    std::sort(joined.begin(), joined.end());
    for (long gpu : joined) seen[static_cast<std::size_t>(gpu)] = true;
    out.push_back(std::move(joined));
  }
  return out;
}

std::vector<std::vector<std::vector<long>>> stage_boundaries(const ParallelLayout& l, const RankOrder& order,
                                                             const std::vector<long>& placement) {
  std::vector<std::vector<std::vector<long>>> out(static_cast<std::size_t>(l.pp));
  for (const auto& g : on_gpus(groups(l, order, Axis::pp), placement))
    for (long b = 0; b < l.pp; ++b)
      out[static_cast<std::size_t>(b)].push_back(
          {g[static_cast<std::size_t>(b)], g[static_cast<std::size_t>((b + 1) % l.pp)]});
  return out;
}

TrainingContext::PipelinePairs pipeline_boundaries(const ParallelLayout& l, const RankOrder& order,
                                                   const std::vector<long>& placement, long per_node) {
  const auto first = on_gpus(group_of(l, order, Axis::pp, 0), placement);
  std::size_t b = 0;
  for (std::size_t s = 0; s + 1 < first.size(); ++s) {
    if (first[s] / per_node != first[s + 1] / per_node) {
      b = s;
      break;
    }
  }
  TrainingContext::PipelinePairs out;
  if (!placement.empty()) {
    out.slowest = concurrent_groups(stage_boundaries(l, order, placement)[b], per_node);
    return out;
  }
  out.slowest.push_back({first[b], first[b + 1]});
  for (const long node : {first[b] / per_node, first[b + 1] / per_node}) {
    for (long g = node * per_node; g < std::min((node + 1) * per_node, l.gpus()); ++g) {
      const auto pipeline = group_of(l, order, Axis::pp, g);  // in stage order (ranks ascend with the stage)
      if (pipeline[b] != g && pipeline[b + 1] != g) continue;
      std::vector<long> pair{pipeline[b], pipeline[b + 1]};
      if (std::find(out.slowest.begin(), out.slowest.end(), pair) == out.slowest.end())
        out.slowest.push_back(std::move(pair));
    }
  }
  return out;
}

RankGroups representative_groups(TrainingContext& cache, const RankGroupsRequest& r) {
  const ParallelLayout& l = r.layout;
  RankGroups out;
  if (l.tp > 1) out.tp = &cache.communicator(on_gpus(group_of(l, r.order, Axis::tp, 0), r.placement));
  if (!r.sequence_model) return out;
  if (l.cp > 1) out.cp_ring = on_gpus(group_of(l, r.order, Axis::cp, 0), r.placement);
  if (l.ep > 1) out.ep = &cache.communicator(on_gpus(group_of(l, r.order, Axis::ep, 0), r.placement));
  return out;
}

}  // namespace gf::work
