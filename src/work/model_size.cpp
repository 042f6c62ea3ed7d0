#include "work/model_size.hpp"

#include <algorithm>

namespace gf::work {

const char* to_string(ModelKind k) { return name_of(kModelKindNames, k); }

const char* to_string(Recompute r) { return name_of(kRecomputeNames, r); }

namespace {

double d(long v) { return static_cast<double>(v); }

double attention_weights(const ModelSpec& m) {
  const double h = d(m.hidden);
  if (m.mla) {
    const auto& a = *m.mla;
    const double qk = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double heads = d(m.heads);
    // Queries: through a low-rank bottleneck (with its norm) or directly.
    const double q =
        a.q_lora_rank > 0 ? h * d(a.q_lora_rank) + d(a.q_lora_rank) + d(a.q_lora_rank) * heads * qk : h * heads * qk;
    // Keys and values: one shared latent (with its norm) plus the shared rotary key part,
    // expanded per head to the non-rotary key and the value.
    const double kv = h * d(a.kv_lora_rank + a.qk_rope_head_dim) + d(a.kv_lora_rank) +
                      d(a.kv_lora_rank) * heads * d(a.qk_nope_head_dim + a.v_head_dim);
    const double o = heads * d(a.v_head_dim) * h;
    return q + kv + o;
  }
  const double q = d(m.attention_width());
  const double kv = d(m.kv_heads * m.head_dim);
  double w = h * q + 2 * h * kv + q * h;
  if (m.linear_bias) w += q + 2 * kv + h;
  return w;
}

double ffn_weights(const ModelSpec& m, long width) {
  const double h = d(m.hidden);
  const double f = d(width);
  double w = (m.gated_ffn ? 3.0 : 2.0) * h * f;
  if (m.linear_bias) w += (m.gated_ffn ? 2.0 : 1.0) * f + h;
  return w;
}

double norm_weights(const ModelSpec& m) { return (m.layer_norm ? 2.0 : 1.0) * d(m.hidden); }

}  // namespace

ParameterCount count_parameters(const ModelSpec& m) {
  ParameterCount p;
  if (!m.is_transformer()) {
    p.total = p.active = m.params;
    return p;
  }
  const double h = d(m.hidden);
  p.embedding = d(m.vocab) * h + (m.learned_positions ? d(m.position_rows > 0 ? m.position_rows : m.seq) * h : 0.0);
  p.output = m.tied_embeddings ? 0.0 : d(m.vocab) * h;
  p.attention = attention_weights(m);
  const double norms = (m.parallel_attention ? 1 : 2) * norm_weights(m);
  p.per_layer = p.attention + ffn_weights(m, m.ffn) + norms;
  double active_layers = 0;
  if (m.moe) {
    const auto& e = *m.moe;
    const double expert = ffn_weights(m, e.expert_ffn);
    const double router = h * d(e.experts);
    p.moe_layer = p.attention + norms + router + (d(e.experts) + d(e.shared_experts)) * expert;
    const double moe_active = p.attention + norms + router + (d(e.top_k) + d(e.shared_experts)) * expert;
    const long dense = std::min<long>(e.dense_layers, m.layers);
    const double moe_layers = d(m.layers - dense);
    p.total = d(dense) * p.per_layer + moe_layers * p.moe_layer;
    active_layers = d(dense) * p.per_layer + moe_layers * moe_active;
  } else {
    p.total = d(m.layers) * p.per_layer;
    active_layers = p.total;
  }
  const double final_norm = norm_weights(m);
  p.total += p.embedding + p.output + final_norm + m.extra_params;
  p.active = active_layers + p.embedding + p.output + final_norm + m.extra_params;
  return p;
}

TokenFlops training_flops(const ModelSpec& m, Recompute recompute) {
  TokenFlops f;
  if (!m.is_transformer()) {
    f.forward = m.flops_per_sample;
  } else {
    const auto p = count_parameters(m);
    // The matrix products a token passes through: every active weight but the input
    // embedding (a table lookup); a tied output projection still multiplies.
    const double weights = p.active - p.embedding + (m.tied_embeddings ? d(m.vocab) * d(m.hidden) : 0.0);
    // Scores (Q K^T) and the weighted sum of values: 2 x 2 x width x sequence per layer,
    // counted over the whole sequence as the convention does (no causal halving).
    const double width = m.mla
                             ? d(m.heads) * d(m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim + m.mla->v_head_dim) / 2
                             : d(m.attention_width());
    f.forward = 2 * weights + 4 * d(m.layers) * width * d(m.seq);
  }
  f.model = 3 * f.forward;  // forward, and backward at twice the forward
  // Recomputation runs forward passes again: all of it (full), or the attention's score and
  // value products (selective, Korthikanti et al. 2022).
  double again = 0;
  // Full recomputation re-runs the transformer layers, not the output projection (Megatron's
  // Eq. 3: 96 B s l h^2 (1 + s/6h + V/16lh) per step, i.e. 6 V h per token for the logits).
  if (recompute == Recompute::full) again = m.is_transformer() ? f.forward - 2 * d(m.vocab) * d(m.hidden) : f.forward;
  if (recompute == Recompute::selective && m.is_transformer()) {
    const double width = d(m.attention_width());
    again = 4 * d(m.layers) * width * d(m.seq);
  }
  if (recompute == Recompute::selective_op && m.is_transformer() && !m.mla) {
    // The second, fourth and sixth matmuls of each layer (layer_cost.cpp): wk, wo, and w3 of a
    // gated FFN or w2 of a plain one; an MoE layer's experts are not recomputed.
    const double kv = d(m.kv_heads * m.head_dim);
    const double dense_layers = m.moe ? d(m.moe->dense_layers) : d(m.layers);
    again = 2 * d(m.hidden) * (d(m.layers) * (kv + d(m.attention_width())) + dense_layers * d(m.ffn));
  }
  f.hardware = f.model + again;
  return f;
}

}  // namespace gf::work
