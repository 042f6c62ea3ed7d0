#include "comm/communicator.hpp"

#include <fmt/format.h>

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
}

std::string Communicator::describe() const {
  return fmt::format("{} ranks on {} node{} x {} {} ({}), network {}", ranks_, nodes_, nodes_ == 1 ? "" : "s", ppn_,
                     t_.gpu_spec().name, nvlink_intra_ ? "NVLink" : "PCIe", t_.network().name);
}

}  // namespace gf::comm
