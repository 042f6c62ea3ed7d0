#pragma once
// The work an MoE layer does around its experts, beside the all-to-alls: the router and the
// token permutation, as Megatron-Core runs them (megatron/core/transformer/moe/router.py,
// moe_utils.py, token_dispatcher.py).
//
// - The router: a GEMM of the tokens against the experts' gate weights (tokens x experts x hidden),
//   then the score function and top-k over a [tokens, experts] matrix of scores in fp32.
// - permute: the tokens gathered into expert order, one copy per expert each goes to
//   (`tokens.index_select(0, sorted_indices)`, or Transformer Engine's fused_permute_with_probs):
//   read [tokens, hidden], write [tokens x top_k, hidden].
// - unpermute: those copies weighted by their probabilities and scattered back
//   (`output_tokens.scatter_add_(0, sorted_indices, permuted_tokens * probs)`, or TE's
//   fused_unpermute): read [tokens x top_k, hidden], write [tokens, hidden].
// The backward runs each in reverse with the same bytes (the gradient of a gather is a scatter)
// and the router's two gradient GEMMs. Read at NVIDIA/Megatron-LM commit 00611e6e.
#include "work/layer_cost.hpp"

namespace gf::work {

struct MoeRoutingCost {
  double forward = 0;  // seconds, one MoE layer, one micro-batch
  double backward = 0;
};

// `tokens`: the tokens this GPU routes (its micro-batch share after sequence parallelism).
// `c`: the 16-bit rates (the router is a plain linear layer, not an FP8 one).
MoeRoutingCost moe_routing_cost(const ModelSpec& m, const ComputeContext& c, double tokens, Precision precision);

}  // namespace gf::work
