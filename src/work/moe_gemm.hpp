#pragma once
// The routed experts' GEMMs as the MoE frameworks run them: one grouped GEMM over this GPU's
// local experts (Megatron-Core's --moe-grouped-gemm, on by default in its MoE recipes;
// DeepSeek's DeepGEMM), each expert a GEMM of the tokens routed to it.
//
// A grouped GEMM reaches what a plain GEMM of one group's shape reaches: DeepGEMM's own tables on
// H800 (deepseek-ai/DeepGEMM README at commit a6d97a1c, "Grouped GEMMs for MoE models
// (contiguous layout)" against "Normal GEMMs for dense models") give 1288 TFLOPS for 8 groups
// of 4096 x 4096 x 7168 against 1304 for one 4096 x 4096 x 7168 GEMM, and 1093 against 1025
// for 7168 x 2048. So the group's own shape sets its efficiency: the tiles each expert's
// tokens leave part-empty and the last wave over all groups (gemm_quantization with `groups`),
// at the GPU's GEMM ceiling, with one launch for the whole group.
#include "work/layer_cost.hpp"

namespace gf::work {

// `groups` GEMMs of (m x k) by (k x n), one grouped launch.
double grouped_gemm_seconds(const ComputeContext& c, double groups, double m, double n, double k);

// The shape of one MoE layer's routed-expert GEMMs on one GPU for one micro-batch.
struct ExpertGemmShape {
  double groups = 1;  // local experts: experts / EP
  double tokens = 0;  // rows per expert: the tokens routed to it from its EP x ETP peers
  double width = 0;   // its FFN width on this GPU: expert FFN / ETP
};
// `dispatched` tokens leave each GPU (its micro-batch share after sequence parallelism), each to
// top_k experts (times the capacity factor), spread evenly over the experts; an ETP group
// gathers its members' tokens when they differ (sequence parallelism), else shares them.
ExpertGemmShape expert_gemm_shape(const ModelSpec& m, const ParallelLayout& l, double dispatched);

}  // namespace gf::work
