#include "work/contention_sample.hpp"

#include <algorithm>

namespace gf::work {

std::optional<std::vector<std::vector<long>>> sample_groups(const std::vector<std::vector<long>>& groups,
                                                            long gpus_per_node, bool stands_for_all) {
  if (!stands_for_all || groups.empty() || gpus_per_node <= 0) return std::nullopt;
  // The first group's nodes in the order its ranks meet them.
  std::vector<long> order;
  for (const long g : groups.front()) {
    const long node = g / gpus_per_node;
    if (order.empty() || order.back() != node) order.push_back(node);
  }
  std::vector<long> nodes = order;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  // A node met twice but not in a row (a rank order that leaves and comes back): the sample's
  // order is not the group's; keep the whole.
  if (nodes.size() != order.size()) return std::nullopt;
  if (nodes.size() < 2 * kContentionSampleNodes) return std::nullopt;
  for (std::size_t i = 1; i < groups.size(); ++i) {
    std::vector<long> own;
    own.reserve(groups[i].size());
    for (const long g : groups[i]) own.push_back(g / gpus_per_node);
    std::sort(own.begin(), own.end());
    own.erase(std::unique(own.begin(), own.end()), own.end());
    if (own != nodes) return std::nullopt;
  }
  std::vector<long> kept(order.begin(), order.begin() + kContentionSampleNodes / 2);
  kept.insert(kept.end(), order.end() - static_cast<std::ptrdiff_t>(kContentionSampleNodes / 2), order.end());
  std::sort(kept.begin(), kept.end());
  std::vector<std::vector<long>> out;
  out.reserve(groups.size());
  for (const auto& g : groups) {
    std::vector<long> s;
    for (const long r : g)
      if (std::binary_search(kept.begin(), kept.end(), r / gpus_per_node)) s.push_back(r);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gf::work
