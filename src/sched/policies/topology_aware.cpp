// Topology-aware placement, as Slurm's topology/tree plugin and Kubernetes' topology-aware
// schedulers (Volcano's HyperNodes, Kueue's topology-aware scheduling) do it: a job goes to the
// lowest tier that holds it whole (one node, then one leaf switch, then the fewest leaves), the
// tightest such group first; inside a node its GPUs sit under one PCIe switch (sharing its NIC)
// or at least one socket.
#include <algorithm>
#include <map>

#include "sched/policies/scores.hpp"

namespace gf::sched {
namespace {

// Pods of `pod` the node could take now (by whole GPUs, or one when the pod needs none).
long room(const ClusterState& c, int node, const PodRequest& pod) {
  if (!c.host_fits(node, pod)) return 0;
  const Node& n = c.node(node);
  long by_gpu = pod.gpus > 0 ? n.whole_free() / pod.gpus : 64;
  if (pod.cpu_milli > 0) by_gpu = std::min(by_gpu, n.cpu_free / pod.cpu_milli);
  if (pod.memory_mib > 0) by_gpu = std::min(by_gpu, n.memory_free / pod.memory_mib);
  return by_gpu;
}

class TopologyAware final : public Policy {
public:
  std::string name() const override { return "topology"; }
  std::string summary() const override {
    return "lowest tier that holds the job (node, leaf switch, fewest leaves), tightest first; GPUs under one PCIe "
           "switch or socket";
  }
  bool local_gpus() const override { return true; }

  std::vector<int> nodes_for(const Job& j, const PlacementContext& c) const override {
    if (j.pods <= 1 || j.pod.gpus == 0) return {};
    const auto& cl = c.cluster;
    // One node that takes every pod.
    int best = -1;
    long best_room = 1L << 40;
    for (int n = 0; n < static_cast<int>(cl.nodes().size()); ++n) {
      const long r = room(cl, n, j.pod);
      if (r >= j.pods && r < best_room) best = n, best_room = r;
    }
    if (best >= 0) return {best};
    // One leaf switch; else the fewest, fullest-fitting leaves.
    std::map<long, long> leaf_room;
    std::map<long, std::vector<int>> leaf_nodes;
    for (int n = 0; n < static_cast<int>(cl.nodes().size()); ++n) {
      const long r = room(cl, n, j.pod);
      if (r == 0) continue;
      leaf_room[cl.node(n).leaf] += r;
      leaf_nodes[cl.node(n).leaf].push_back(n);
    }
    long best_leaf = -1;
    best_room = 1L << 40;
    for (const auto& [leaf, r] : leaf_room)
      if (r >= j.pods && r < best_room) best_leaf = leaf, best_room = r;
    if (best_leaf >= 0) return leaf_nodes[best_leaf];
    std::vector<std::pair<long, long>> by_room;  // (room, leaf)
    for (const auto& [leaf, r] : leaf_room) by_room.emplace_back(r, leaf);
    std::sort(by_room.begin(), by_room.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<int> out;
    long have = 0;
    for (const auto& [r, leaf] : by_room) {
      if (have >= j.pods) break;
      have += r;
      out.insert(out.end(), leaf_nodes[leaf].begin(), leaf_nodes[leaf].end());
    }
    return out;
  }

  double score(const PodPlacement& o, const PodRequest& pod, const PlacementContext& c) const override {
    // Spread inside the node first (sockets, then PCIe switches), then best fit.
    const Node& n = c.cluster.node(o.node);
    std::vector<int> sockets, switches;
    for (int g : o.gpus) {
      const auto& s = n.gpus[static_cast<std::size_t>(g)];
      if (std::find(sockets.begin(), sockets.end(), s.socket) == sockets.end()) sockets.push_back(s.socket);
      const int sw = s.socket * 1024 + s.nic;
      if (std::find(switches.begin(), switches.end(), sw) == switches.end()) switches.push_back(sw);
    }
    const double spread =
        n.nvswitch ? 0.0 : static_cast<double>(sockets.size()) * 8 + static_cast<double>(switches.size());
    return spread * 1e12 + best_fit_score(o, pod, c.cluster);
  }
};

const bool registered = register_policy("topology", [] { return std::make_unique<TopologyAware>(); });

}  // namespace
}  // namespace gf::sched
