#pragma once
// DeepSeek's multi-head latent attention as Megatron-Core trains it (MLASelfAttention,
// megatron/core/transformer/multi_latent_attention.py): its five projections and the width of
// its attention core, which differ from a plain attention of hidden / heads per head.
//
// - queries: linear_q_down_proj (hidden -> q_lora_rank, duplicated on every TP rank), then
//   linear_q_up_proj (q_lora_rank -> heads x (qk_nope + qk_rope), column-parallel); without a
//   query rank one linear_q_proj (hidden -> heads x (qk_nope + qk_rope));
// - keys and values: linear_kv_down_proj (hidden -> kv_lora_rank + qk_rope, duplicated), then
//   linear_kv_up_proj (kv_lora_rank -> heads x (qk_nope + v), column-parallel);
// - the output: linear_proj (heads x v -> hidden, row-parallel);
// - the core: scores over qk_nope + qk_rope per head, values of v per head, so a pass costs
//   2 x b x heads x s^2 x (d_qk + d_v) FLOPs: FlashAttention's 4 x ... x d at d = (d_qk + d_v) / 2.
#include "work/layer_cost.hpp"

namespace gf::work {

struct MlaProjections {
  double entry_seconds = 0;  // the projections before the core, forward
  double exit_seconds = 0;   // the output projection, forward
  double params = 0;         // the attention's weights on one GPU
  // FP8 casts around the five linear layers, bytes per token (pointwise_traffic.hpp).
  double cast_forward_bytes = 0;
  double cast_backward_bytes = 0;
};

// `tokens` rows on one GPU, TP `tp` splitting the heads.
MlaProjections mla_projections(const MlaSpec& a, long hidden, long heads, long tp, const ComputeContext& c,
                               double tokens);

// The head size that makes FlashAttention's FLOP count, 4 x b x heads x s^2 x d, the MLA core's.
long mla_core_head_dim(const MlaSpec& a);

}  // namespace gf::work
