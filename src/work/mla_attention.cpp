#include "work/mla_attention.hpp"

#include <vector>

#include "work/pointwise_traffic.hpp"

namespace gf::work {

MlaProjections mla_projections(const MlaSpec& a, long hidden, long heads, long tp, const ComputeContext& c,
                               double tokens) {
  const double h = static_cast<double>(hidden);
  const double per_gpu_heads = static_cast<double>(heads) / static_cast<double>(tp);
  const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
  const double v = static_cast<double>(a.v_head_dim);
  const double q_rank = static_cast<double>(a.q_lora_rank);
  const double kv_rank = static_cast<double>(a.kv_lora_rank);
  const double kv_down = kv_rank + static_cast<double>(a.qk_rope_head_dim);
  struct Linear {
    double in, out;
    bool input_cast_fused;  // the norm before it writes its input in FP8 already
  };
  // Each linear layer's (input, output) widths on this GPU. The down projections are plain
  // TELinear layers reading the layer norm's 16-bit output (their own casts); the up projections
  // are TELayerNormColumnParallelLinear, the latent's norm fused with the cast (Megatron-Core's
  // gpt_layer_specs MLA submodules).
  const double kv_up = per_gpu_heads * (static_cast<double>(a.qk_nope_head_dim) + v);
  std::vector<Linear> linears;
  if (q_rank > 0) {
    linears.push_back({h, q_rank, false});
    linears.push_back({q_rank, per_gpu_heads * qk, true});
  } else {
    linears.push_back({h, per_gpu_heads * qk, true});
  }
  linears.push_back({h, kv_down, false});
  linears.push_back({kv_rank, kv_up, true});
  MlaProjections out;
  for (const auto& l : linears) {
    out.entry_seconds += gemm_seconds(c, tokens, l.out, l.in);
    out.params += l.in * l.out;
    const Fp8CastBytes cast = fp8_linear_casts(l.in, l.out, l.input_cast_fused);
    out.cast_forward_bytes += cast.forward;
    out.cast_backward_bytes += cast.backward;
  }
  // The output projection reads the attention core's 16-bit output.
  out.exit_seconds = gemm_seconds(c, tokens, h, per_gpu_heads * v);
  out.params += per_gpu_heads * v * h;
  const Fp8CastBytes proj = fp8_linear_casts(per_gpu_heads * v, h, false);
  out.cast_forward_bytes += proj.forward;
  out.cast_backward_bytes += proj.backward;
  return out;
}

long mla_core_head_dim(const MlaSpec& a) { return (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim) / 2; }

}  // namespace gf::work
