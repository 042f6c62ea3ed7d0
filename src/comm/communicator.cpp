#include "comm/communicator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace gf::comm {

Communicator::Communicator(const topo::Topology& t, long ranks) : t_(t) {
  const long total = t.gpu_count();
  const int gpn = t.gpus_per_node();
  if (ranks == 0) ranks = total;
  if (ranks < 1 || ranks > total) {
    throw InputError({}, "--gpus", fmt::format("{} ranks asked for, but the cluster has {} GPUs", ranks, total),
                     fmt::format("1 to {} (or more --nodes)", total));
  }
  if (ranks <= gpn && t.nodes() == 1) {
    nodes_ = 1;
    ppn_ = static_cast<int>(ranks);
  } else {
    nodes_ = t.nodes();
    if (ranks % nodes_ != 0 || ranks / nodes_ > gpn) {
      throw InputError({}, "--gpus",
                       fmt::format("{} ranks cannot be spread evenly over {} nodes of {} GPUs", ranks, nodes_, gpn),
                       fmt::format("a multiple of {} up to {}, or set --nodes to the nodes you use", nodes_, total));
    }
    ppn_ = static_cast<int>(ranks / nodes_);
  }
  ranks_ = ranks;

  const auto& params = nccl_params();
  const auto& gpu = t.gpu_spec();
  const int nvgen = gpu.nvlink && gpu.nvlink->generation > 0 ? gpu.nvlink->generation : 0;
  const auto eff = params.nvlink_efficiency.find(nvgen);
  capacity_.reserve(t.graph().link_count());
  for (const auto& l : t.graph().links()) {
    double c = l.capacity.value();
    if (l.kind == topo::LinkKind::nvlink && eff != params.nvlink_efficiency.end())
      c = l.line_rate.value() * eff->second;
    capacity_.push_back(c);
  }
  nvlink_intra_ = ppn_ > 1;
  for (int a = 0; a < ppn_ && nvlink_intra_; ++a) {
    for (int b = 0; b < ppn_ && nvlink_intra_; ++b) {
      if (a != b) nvlink_intra_ = t.node().gpu_to_gpu(a, b, t.spec().p2p).transport == topo::Transport::nvlink;
    }
  }
  nvls_ = t.node().nvswitch_sharp() && t.spec().p2p && ppn_ > 1;
  sharp_ = t.network_switch().sharp && t.network().family == "infiniband";
  const std::string& g = gpu.name;
  arch_ = g.rfind("v100", 0) == 0 || g.rfind("rtx-2080", 0) == 0                             ? 0
          : g.rfind("a100", 0) == 0 || g.rfind("a10", 0) == 0 || g.rfind("rtx-3090", 0) == 0 ? 1
                                                                                             : 2;
  amd_cpu_ = t.cpu_spec().name.find("epyc") != std::string::npos ||
             t.cpu_spec().name.find("threadripper") != std::string::npos;
  staging_efficiency_ = t.node().staging_efficiency();
  channels_hint_ = gpu.nvlink ? std::clamp(gpu.nvlink->links, 2, 32) : 2;
  search_intra_ring();
}

void Communicator::search_intra_ring() {
  std::vector<int> natural(static_cast<std::size_t>(ppn_));
  std::iota(natural.begin(), natural.end(), 0);
  intra_rings_ = {natural};
  const auto& node = t_.node();
  const bool mesh = t_.spec().node.gpu_fabric == topo::GpuFabric::nvlink_mesh && t_.spec().p2p;
  // Brute force over the orders with rank 0 first: at most 9! = 362,880 for 10 GPUs.
  if (!mesh || ppn_ < 3 || ppn_ > 10) return;
  const auto n = static_cast<std::size_t>(ppn_);
  std::vector<std::vector<double>> residual(n, std::vector<double>(n, 0.0));
  for (int a = 0; a < ppn_; ++a) {
    for (int b = 0; b < ppn_; ++b) {
      if (a == b) continue;
      const auto r = node.gpu_to_gpu(a, b, true);
      if (r.transport != topo::Transport::nvlink) continue;  // NCCL's rings stay on NVLink
      double cap = std::numeric_limits<double>::infinity();
      for (const auto l : r.links) cap = std::min(cap, capacity_[l]);
      residual[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = cap;
    }
  }
  std::vector<std::vector<int>> rings;
  const int wanted = std::max(1, channels_hint_ / 2);
  for (int k = 0; k < wanted; ++k) {
    std::vector<int> order = natural;
    std::vector<int> best;
    double best_min = 0;
    double best_sum = 0;
    do {
      double mn = std::numeric_limits<double>::infinity();
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double b = residual[static_cast<std::size_t>(order[i])][static_cast<std::size_t>(order[(i + 1) % n])];
        mn = std::min(mn, b);
        sum += b;
      }
      if (mn > best_min * (1 + 1e-12) || (mn > 0 && mn >= best_min * (1 - 1e-12) && sum > best_sum * (1 + 1e-12))) {
        best_min = mn;
        best_sum = sum;
        best = order;
      }
    } while (std::next_permutation(order.begin() + 1, order.end()));
    if (best.empty()) break;  // no NVLink-only cycle left
    rings.push_back(best);
    // A cycle runs in both directions (two channels), using its bottleneck share of every hop.
    for (std::size_t i = 0; i < n; ++i) {
      const auto a = static_cast<std::size_t>(best[i]);
      const auto b = static_cast<std::size_t>(best[(i + 1) % n]);
      residual[a][b] -= best_min;
      residual[b][a] -= best_min;
    }
  }
  if (rings.empty()) return;
  intra_rings_ = rings;
  bidirectional_rings_ = true;
  nvlink_intra_ = true;  // NCCL's rings here are all NVLink hops
}

std::string Communicator::describe() const {
  return fmt::format("{} ranks on {} node{} x {} {} ({}), network {}", ranks_, nodes_, nodes_ == 1 ? "" : "s", ppn_,
                     t_.gpu_spec().name, nvlink_intra_ ? "NVLink" : "PCIe", t_.network().name);
}

}  // namespace gf::comm
