#pragma once
// Training step, placement and groups: where the job's ranks run and the groups they form on
// the cluster's GPUs (tensor-, context-, expert- and data-parallel groups, the pipeline's stage
// boundaries). Ranks are numbered in the layout's rank order; a placement puts rank r on global
// GPU placement[r], else rank r runs on GPU r.
#include <vector>

#include "comm/communicator.hpp"
#include "work/parallel_layout.hpp"
#include "work/training_context.hpp"

namespace gf::work {

// The global GPUs of these ranks: placement[r] for rank r, or r itself when no placement is
// given (the ranks on the cluster's first GPUs).
std::vector<long> on_gpus(std::vector<long> ranks, const std::vector<long>& placement);
std::vector<std::vector<long>> on_gpus(std::vector<std::vector<long>> groups, const std::vector<long>& placement);

// The groups whose traffic meets the first one's: those on the same nodes (they share its NICs,
// PCIe switches and leaf uplinks). Groups on other nodes share only the fabric above the
// leaves, and are left out. The first group comes first.
std::vector<std::vector<long>> concurrent_groups(const std::vector<std::vector<long>>& all, long gpus_per_node);

// The groups gradients are reduced over, as ranks: the data-parallel ones, joined with their
// context-parallel peers (the CP ranks hold the same parameters and saw different tokens), as
// Megatron's data-parallel-with-context-parallel groups. Expert parameters are reduced over this
// whole group too, not the smaller expert-data-parallel one (an approximation: per rank a ring
// moves nearly the same bytes either way).
std::vector<std::vector<long>> gradient_groups(const ParallelLayout& l, const RankOrder& order);

// Every pipeline's GPUs facing each other across each stage boundary: [b] holds (stage b GPU,
// stage b + 1 GPU) pairs; the last, stage PP - 1 to stage 0, hands the interleaved schedule's
// chunks back to the first stage.
std::vector<std::vector<std::vector<long>>> stage_boundaries(const ParallelLayout& l, const RankOrder& order,
                                                             const std::vector<long>& placement);

// The slowest boundary of GPU 0's pipeline (the first that crosses servers, else the first)
// and the pairs across it that share a node with GPU 0's pair. Without a placement only the
// GPUs of those two nodes are looked at (a planner prices many layouts on large clusters).
TrainingContext::PipelinePairs pipeline_boundaries(const ParallelLayout& l, const RankOrder& order,
                                                   const std::vector<long>& placement, long per_node);

struct RankGroupsRequest {
  const ParallelLayout& layout;
  const RankOrder& order;
  const std::vector<long>& placement;  // rank r on GPU placement[r]; empty: on GPU r
  bool sequence_model = true;          // a transformer (CP and EP groups exist only there)
};

// The groups the representative GPU 0 belongs to whose collectives sit in the critical path.
struct RankGroups {
  const comm::Communicator* tp = nullptr;  // tensor-parallel group (the context's); null with TP 1
  const comm::Communicator* ep = nullptr;  // expert-parallel group; null with EP 1
  std::vector<long> cp_ring;               // context-parallel ring, global GPUs; empty with CP 1
};

// Built through the context, so that the next evaluation on the same cluster reuses them.
RankGroups representative_groups(TrainingContext& cache, const RankGroupsRequest& r);

}  // namespace gf::work
