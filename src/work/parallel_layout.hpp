#pragma once
// How a training job is split over GPUs, in Megatron-LM's terms, and where each rank sits: the
// GPUs of every tensor-, context-, expert-, data- and pipeline-parallel group, so that each
// group's collectives are priced on the links its GPUs really share.
#include <string>
#include <vector>

#include "core/enum_names.hpp"

namespace gf::work {

struct ParallelLayout {
  long tp = 1;  // tensor parallel
  long pp = 1;  // pipeline stages
  long dp = 1;  // data parallel
  long cp = 1;  // context parallel (the sequence split over ring attention)
  // Expert parallel. Megatron-Core's "MoE parallel folding" (Liu et al., arXiv:2504.14960;
  // megatron/core/parallel_state.py `initialize_model_parallel`) numbers the expert layers' ranks
  // on a grid of their own, ETP x EP x expert-DP x PP in the same order with CP folded away, so
  // EP may span TP, CP and DP: ETP x EP x PP must divide the GPUs.
  long ep = 1;
  long etp = 0;  // expert tensor parallel (--expert-tensor-parallel-size); 0: TP, Megatron's default
  long vpp = 1;  // virtual stages per pipeline rank (interleaved schedule)
  // How the layers are split over the stages when not evenly (pipeline_split.hpp).
  struct StageSplit {
    long first_stage_layers = 0;  // Megatron's --decoder-first-pipeline-num-layers; 0: not given
    long last_stage_layers = 0;   // --decoder-last-pipeline-num-layers
    bool account_for_embedding = false;
    bool account_for_loss = false;
    std::string layout;     // --pipeline-model-parallel-layout
    bool balanced = false;  // torchtitan's split (as even as the layers go), not Megatron's
  } split;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;   // Megatron's --tp-comm-overlap (with sequence parallelism)
  bool overlap_p2p_comm = false;  // Megatron's --overlap-p2p-communication (interleaved schedule)
  [[nodiscard]] long gpus() const { return tp * pp * dp * cp; }
  [[nodiscard]] long expert_tp() const { return etp > 0 ? etp : tp; }
};

// Megatron's check on the expert grid: "world_size is not divisible by
// expert_tensor_model_pipeline_parallel size". Throws InputError saying what would fit.
void check_expert_grid(const ParallelLayout& l, long experts);

enum class Axis { tp, cp, ep, dp, pp };
inline constexpr EnumNames<Axis, 5> kAxisNames{
    {{Axis::tp, "tp"}, {Axis::cp, "cp"}, {Axis::ep, "ep"}, {Axis::dp, "dp"}, {Axis::pp, "pp"}}};
const char* to_string(Axis a);

// The order ranks are numbered in, innermost first. Megatron's default is tp-cp-ep-dp-pp:
// consecutive ranks form a TP group (one NVLink domain when TP divides the node), the pipeline
// stages are outermost (they cross the fabric).
struct RankOrder {
  std::vector<Axis> inner_to_outer{Axis::tp, Axis::cp, Axis::ep, Axis::dp, Axis::pp};
};

// Parses "tp-cp-ep-dp-pp" (every axis once; ep may be left out). Throws InputError naming
// `flag` otherwise.
RankOrder parse_rank_order(const std::string& text, const std::string& flag);

// Ranks are placed on GPUs 0, 1, ... of the cluster (node by node). Every group of one kind,
// each as the global GPU indices of its ranks, in rank order within the group.
std::vector<std::vector<long>> groups(const ParallelLayout& l, const RankOrder& order, Axis axis);

// The group of `axis` that holds global GPU `gpu`.
std::vector<long> group_of(const ParallelLayout& l, const RankOrder& order, Axis axis, long gpu);

}  // namespace gf::work
