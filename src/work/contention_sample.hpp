#pragma once
// Concurrent collectives on a large cluster, priced on a sample of their nodes.
//
// How much concurrent groups slow each other (TrainingContext::contention) is a flow-engine run
// whose cost grows with the groups' ranks: two data-parallel groups of 512 GPUs take ~25 ms, and
// a planner meets dozens of such sets. When every group spans the same nodes, each node carries
// the same traffic whatever the number of nodes: a ring enters and leaves every node once per
// channel, and NCCL's trees give every node at most a parent and two children per tree. On a
// non-blocking fabric the links above the NICs never bind before the NICs do, so what stretches
// one group is what happens inside and at the edge of its nodes, and a few nodes show it as well
// as all of them. The sample keeps the first and the last nodes of the first group, so that a
// fabric of several leaf switches is still crossed. Test: Contention.SampledNodesGiveTheFullFactor.
#include <cstddef>
#include <optional>
#include <vector>

namespace gf::work {

// Nodes of the first group kept by a sample (half from its start, half from its end).
inline constexpr std::size_t kContentionSampleNodes = 8;

// Each group's ranks (global GPU indices) on the sampled nodes, in their order, or nothing when
// the sample would not stand for the whole: the groups span fewer than twice the sample's nodes,
// do not all span the same nodes, or the caller says the sample cannot stand for the whole
// (`stands_for_all` false: a tree on an oversubscribed fabric, whose uplink crossings grow with
// the nodes it spans).
std::optional<std::vector<std::vector<long>>> sample_groups(const std::vector<std::vector<long>>& groups,
                                                            long gpus_per_node, bool stands_for_all);

}  // namespace gf::work
