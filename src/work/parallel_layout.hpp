#pragma once
// How a training job is split over GPUs, in Megatron-LM's terms, and where each rank sits: the
// GPUs of every tensor-, context-, expert-, data- and pipeline-parallel group, so that each
// group's collectives are priced on the links its GPUs really share.
#include <string>
#include <vector>

namespace gf::work {

struct ParallelLayout {
  long tp = 1;   // tensor parallel
  long pp = 1;   // pipeline stages
  long dp = 1;   // data parallel
  long cp = 1;   // context parallel (the sequence split over ring attention)
  long ep = 1;   // expert parallel, carved out of the data-parallel ranks as Megatron does
  long vpp = 1;  // virtual stages per pipeline rank (interleaved schedule)
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;   // Megatron's --tp-comm-overlap (with sequence parallelism)
  bool overlap_p2p_comm = false;  // Megatron's --overlap-p2p-communication (interleaved schedule)
  [[nodiscard]] long gpus() const { return tp * pp * dp * cp; }
};

enum class Axis { tp, cp, ep, dp, pp };
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
