#include "comm/algorithm.hpp"

#include <algorithm>
#include <array>

#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/nccl_terms.hpp"
#include "comm/communicator.hpp"
#include "comm/pipeline_fill.hpp"

namespace gf::comm {

// The registry: one line per algorithm, in the order of enum Algo (a test checks the order).
// It points at each file's pointer to its instance, so that the whole table is constant:
// initialized before any code runs, and read by the inline algorithm() with two loads.
constinit const CollectiveAlgorithm* const* const detail::registry[kAlgoCount] = {
    &algorithms::ring,            //
    &algorithms::tree,            //
    &algorithms::nvls,            //
    &algorithms::nvls_tree,       //
    &algorithms::collnet_direct,  //
    &algorithms::collnet_chain,   //
    &algorithms::pat,             //
    &algorithms::hierarchical,    //
    &algorithms::p2p,             //
};

std::span<const CollectiveAlgorithm* const> all_algorithms() {
  // In Algo's order, as the registry (the instances themselves, not the table's indirection).
  static const std::array<const CollectiveAlgorithm*, kAlgoCount> list = [] {
    std::array<const CollectiveAlgorithm*, kAlgoCount> out{};
    for (std::size_t i = 0; i < kAlgoCount; ++i) out[i] = *detail::registry[i];
    return out;
  }();
  return list;
}

std::vector<std::string> algo_names() {
  std::vector<std::string> out;
  for (const auto* a : all_algorithms())
    if (a->traits().forceable) out.emplace_back(a->name());
  return out;
}

std::string algo_name_list(const char* last_separator, bool mark_own) {
  std::vector<const CollectiveAlgorithm*> named;
  for (const auto* a : all_algorithms())
    if (a->traits().forceable) named.push_back(a);
  std::string out;
  for (std::size_t i = 0; i < named.size(); ++i) {
    if (i > 0) out += i + 1 == named.size() ? last_separator : ", ";
    out += named[i]->name();
    if (mark_own && !named[i]->traits().in_nccl) out += " (gpufabric's own)";
  }
  return out;
}

// The defaults: what most algorithms share.

double CollectiveAlgorithm::protocol_factor(const Communicator& c, Op /*op*/, Proto p) const {
  return c.params().factor[0][static_cast<int>(p)];
}

int CollectiveAlgorithm::default_channels(const Communicator& c) const {
  // Across NVLink nodes NCCL runs two channels per NIC (or per GPU, whichever is more), at most
  // 32. A ring across PCIe nodes still threads every GPU of each node, so its search is held to
  // the same PCIe (and inter-socket) links as inside one node: NCCL duplicates a graph's channels
  // only where its intra-node bandwidth reaches 25 GB/s (ncclTopoDupChannels in search.cc), which
  // PCIe paths do not, and ends with the two channels it opens inside such a node (NCCL INFO
  // logs of PCIe servers across nodes print 2 coll channels).
  const int width = std::max(1, std::max(c.nics_per_node(), c.ranks_per_node()));
  if (c.nodes() > 1) return c.nvlink_intra() || c.ranks_per_node() < 2 ? std::min(32, 2 * width) : 2;
  if (c.nvlink_intra()) {
    const auto& gpu = c.topology().gpu_spec();
    // An NVSwitch node: the channel count NCCL prints at init for this NVLink generation.
    if (c.topology().node().has_nvswitch() && gpu.nvlink) {
      const auto& table = c.params().nvswitch_coll_channels;
      if (const auto it = table.find(gpu.nvlink->generation); it != table.end()) return it->second;
    }
    return std::clamp(gpu.nvlink ? gpu.nvlink->links : 2, 2, 32);
  }
  return 2;
}

int CollectiveAlgorithm::channels(const Communicator& c) const {
  int n = default_channels(c);
  // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS bound the ring and tree channels (NCCL duplicates
  // or drops channels of its search to meet them); NVLS keeps NCCL_NVLS_NCHANNELS.
  if (traits_.follows_channel_env) {
    if (c.env().min_channels > 0) n = std::max(n, c.env().min_channels);
    if (c.env().max_channels > 0) n = std::min(n, c.env().max_channels);
  }
  return n;
}

PipelineShape CollectiveAlgorithm::pipeline_shape(const Communicator& /*c*/, Op /*op*/, Proto /*p*/,
                                                  double /*size*/) const {
  return {};  // PAT: no fill (point-to-point has its own: p2p.cpp; see pipeline_fill.hpp)
}

double CollectiveAlgorithm::nccl_algbw_ratio(Op op, long /*ranks*/) const {
  return op == Op::all_gather || op == Op::reduce_scatter ? 1.0 : 0.5;
}

double CollectiveAlgorithm::nccl_latency_us(const Communicator& c, Op /*op*/, Proto p, double /*size*/) const {
  return nccl_latency_terms(c, id(), p).base;
}

}  // namespace gf::comm
