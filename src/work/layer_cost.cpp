#include "work/layer_cost.hpp"

#include <cmath>

#include <algorithm>
#include <initializer_list>
#include <optional>

#include "work/mla_attention.hpp"
#include "work/moe_gemm.hpp"
#include "work/moe_routing.hpp"
#include "work/pointwise_traffic.hpp"

namespace gf::work {

namespace {

double element_bytes(Precision p) { return p == Precision::fp32 ? 4.0 : 2.0; }

}  // namespace

double peak_flops(const ComputeContext& c) {
  if (c.resolved) return c.peak;
  const auto& t = c.gpu.tflops_dense;
  auto get = [&](const char* k) {
    const auto it = t.find(k);
    return it == t.end() ? 0.0 : it->second;
  };
  double tf = 0;
  switch (c.precision) {
    case Precision::fp32: tf = get("tf32") > 0 ? get("tf32") : get("fp32_vector"); break;
    case Precision::fp16: tf = get("fp16"); break;
    case Precision::bf16: tf = get("bf16") > 0 ? get("bf16") : get("fp16"); break;
    case Precision::fp8: tf = get("fp8") > 0 ? get("fp8") : (get("bf16") > 0 ? get("bf16") : get("fp16")); break;
  }
  return tf * 1e12;
}

double gemm_quantization(double m, double n, double groups, int sms) {
  if (sms <= 0 || m <= 0 || n <= 0) return 1.0;
  const double tiles = groups * std::ceil(m / 128) * std::ceil(n / 128);
  const double padded = tiles * 128 * 128 / (groups * m * n);
  const double s = static_cast<double>(sms);
  return tiles < s ? padded : padded * std::ceil(tiles / s) * s / tiles;
}

ComputeContext resolve_rates(ComputeContext c) {
  c.resolved = false;
  const double peak = peak_flops(c);
  const GemmModel g = c.efficiency.gemm(c.gpu, c.precision);
  c.peak = peak;
  c.ceiling = c.gemm_ceiling > 0 ? c.gemm_ceiling : g.ceiling;
  c.ceiling_k = c.gemm_ceiling > 0 ? 0.0 : g.ceiling_k;  // a probed rate: its shape is not known here
  c.tile_overhead_k = c.efficiency.tile_overhead_k();
  c.fixed_s = c.tile_overhead_k > 0 ? g.depth_fixed_s : g.fixed_s;
  c.sms = c.efficiency.sm_count(c.gpu);
  c.kernel_memory_fraction = c.efficiency.kernel_memory_fraction(c.gpu);
  c.resolved = true;
  return c;
}

double gemm_seconds(const ComputeContext& c, double m, double n, double k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  if (!c.resolved) return gemm_seconds(resolve_rates(c), m, n, k);
  const double flops = 2 * m * n * k;
  const double bytes = (m * k + k * n + m * n) * element_bytes(c.precision);
  // The ceiling is what a well-shaped GEMM reaches (a shape search's best): quantization is the
  // loss on top of it for this shape.
  const double quantization = gemm_quantization(m, n, 1, c.sms);
  // Each tile also fills its operand pipeline and writes its output, whatever K: shallow GEMMs
  // (an output projection under TP, attention's batched GEMMs) pay more per FLOP.
  const double depth = gemm_depth_factor(k, c.ceiling_k, c.tile_overhead_k);
  const double math = flops * quantization * depth / (c.peak * c.ceiling);
  const double memory = bytes / (c.gpu.memory_bandwidth.value() * c.efficiency.memory_fraction());
  return c.fixed_s + std::max(math, memory);
}

double attention_seconds(const ComputeContext& c, double batch, double heads, double queries, double keys,
                         long head_dim, bool causal, bool backward) {
  // Two matmuls forward (scores, weighted values), five backward: FlashAttention's convention,
  // halved where the mask leaves half the scores out.
  double flops = 4 * batch * heads * queries * keys * static_cast<double>(head_dim) * (causal ? 0.5 : 1.0);
  if (backward) flops *= 2.5;
  const double fraction = c.efficiency.attention(c.gpu, c.precision, static_cast<long>(keys), head_dim, causal,
                                                 backward, c.attention_kernel);
  return flops / (peak_flops(c) * std::max(0.05, fraction));
}

double unfused_attention_seconds(const ComputeContext& c, double batch, double heads, double queries, double keys,
                                 long head_dim, bool backward) {
  // Scores and probabilities live in HBM: two batched GEMMs forward (scores = Q K^T, out = P V),
  // four backward; each a GEMM over every head of the micro-batch at the GEMM curve (the mask
  // saves nothing: the whole square is computed). Between them the element-wise kernels stream
  // the score matrix: forward the fused scale-mask-softmax (read and write 2-byte scores) and
  // the dropout on the probabilities (read, write, a 1-byte mask): 9 bytes per score; backward
  // the dropout's (read the gradient and the mask, write) and the softmax's (read the
  // probabilities and the gradient, write): 11 bytes per score.
  const double d = static_cast<double>(head_dim);
  const double rows = batch * heads * queries;
  const double gemms = gemm_seconds(c, rows, keys, d) + gemm_seconds(c, rows, d, keys);
  const double scores = rows * keys;
  return backward ? 2 * gemms + memory_seconds(c, 11 * scores) : gemms + memory_seconds(c, 9 * scores);
}

double memory_seconds(const ComputeContext& c, double bytes) {
  const double fraction = c.resolved ? c.kernel_memory_fraction : c.efficiency.kernel_memory_fraction(c.gpu);
  return bytes / (c.gpu.memory_bandwidth.value() * fraction);
}

TransformerLayerCost transformer_layer_cost(const ModelSpec& m, const ParallelLayout& l, const MemoryOptions& o,
                                            const ComputeContext& c, bool moe_layer) {
  TransformerLayerCost out;
  const double t = static_cast<double>(l.tp);
  const double cp = static_cast<double>(l.cp);
  const double b = static_cast<double>(o.micro_batch);
  const double s = static_cast<double>(m.seq) / cp;  // this GPU's share of the sequence
  const double tokens = b * s;
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.attention_width());
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double e = element_bytes(o.precision);
  const double sp = l.sequence_parallel ? t : 1.0;
  // The element-wise kernels: a norm and a residual add per half, the attention's input
  // preparation, the FFN's activation (fused, or one kernel per operator in eager mode).
  const PointwiseBytes pw = pointwise_bytes(m, l, o.precision, o.kernels);
  const bool fp8 = o.precision == Precision::fp8;
  const double elementwise = memory_seconds(c, tokens * pw.norm_and_residual);
  const double attention_inputs = memory_seconds(c, tokens * pw.attention_inputs);

  // Attention half.
  // Multi-head latent attention (DeepSeek) projects through low-rank latents and attends over
  // wider heads than hidden / heads (mla_attention.hpp).
  const auto mla = m.mla ? std::optional(mla_projections(*m.mla, m.hidden, m.heads, l.tp, c, tokens)) : std::nullopt;
  const long core_head_dim = m.mla ? mla_core_head_dim(*m.mla) : m.head_dim;
  const double qkv = mla ? mla->entry_seconds : gemm_seconds(c, tokens, (q + 2 * kv) / t, h);
  const double proj = mla ? mla->exit_seconds : gemm_seconds(c, tokens, h, q / t);
  const bool causal = m.kind == ModelKind::decoder;
  const double heads = static_cast<double>(m.heads) / t;
  // Context parallelism (ring attention): this GPU's queries against the whole sequence.
  // FP8 training (Transformer Engine's recipes) runs the linear layers in FP8 and the attention
  // core in 16 bits.
  const char* kernel = o.attention == Attention::flash2  ? "flash-attention-2"
                       : o.attention == Attention::cudnn ? "cudnn"
                                                         : "flash-attention-3";
  const ComputeContext a = [&] {
    if (c.precision == Precision::fp8) return resolve_rates({c.gpu, Precision::bf16, c.efficiency, kernel, 0.0});
    ComputeContext x = c;  // the same precision: c's rates, looked up once
    x.attention_kernel = kernel;
    return x;
  }();
  const double core_f = o.attention != Attention::unfused
                            ? attention_seconds(a, b, heads, s, s * cp, core_head_dim, causal, false)
                            : unfused_attention_seconds(a, b, heads, s, s * cp, core_head_dim, false);
  const double core_b = o.attention != Attention::unfused
                            ? attention_seconds(a, b, heads, s, s * cp, core_head_dim, causal, true)
                            : unfused_attention_seconds(a, b, heads, s, s * cp, core_head_dim, true);
  // FP8: the casts around a half's linear layers, forward and backward seconds (none in 16 bits).
  auto fp8_casts = [&](double token_count, std::initializer_list<Fp8CastBytes> linears) {
    if (!fp8) return std::pair{0.0, 0.0};
    double forward = 0, backward = 0;
    for (const auto& x : linears) forward += x.forward, backward += x.backward;
    return std::pair{memory_seconds(c, token_count * forward), memory_seconds(c, token_count * backward)};
  };
  // QKV's input comes from the norm, already FP8; the output projection's from the attention
  // kernel, in 16 bits.
  const auto [casts_f, casts_b] =
      mla ? (fp8 ? std::pair{memory_seconds(c, tokens * mla->cast_forward_bytes),
                             memory_seconds(c, tokens * mla->cast_backward_bytes)}
                 : std::pair{0.0, 0.0})
          : fp8_casts(tokens, {fp8_linear_casts(h, (q + 2 * kv) / t, true), fp8_linear_casts(q / t, h, false)});
  out.attention_forward = qkv + core_f + proj + elementwise + attention_inputs + casts_f;
  out.attention_entry_gemm = qkv;
  out.attention_exit_gemm = proj;
  // Backward: every GEMM twice (input and weight gradients), the attention's own backward.
  out.attention_backward = 2 * (qkv + proj) + core_b + 2 * (elementwise + attention_inputs) + casts_b;

  // FFN half (or the experts this GPU runs: top-k of every token, spread over EP ranks, so on
  // average each GPU runs top-k x its tokens; plus the shared experts).
  auto ffn_cost = [&](double width, double token_count) {
    const double up = gemm_seconds(c, token_count, width * (m.gated_ffn ? 2.0 : 1.0) / t, h);
    const double down = gemm_seconds(c, token_count, h, width / t);
    const double act = memory_seconds(c, token_count * width / t * pw.activation);
    const auto [cast_f, cast_b] = fp8_casts(
        token_count,
        {fp8_linear_casts(h, width * (m.gated_ffn ? 2.0 : 1.0) / t, true), fp8_linear_casts(width / t, h, true)});
    return std::pair{up + down + act + cast_f, 2 * (up + down) + 2 * act + cast_b};
  };
  std::pair<double, double> ffn{0, 0};
  double ffn_params = 0;
  if (moe_layer && m.moe) {
    const auto& x = *m.moe;
    // The routed experts: one grouped GEMM over the local experts, each of its own tokens
    // (moe_gemm.hpp), so small per-expert batches pay their part-empty tiles.
    const ExpertGemmShape g = expert_gemm_shape(m, l, tokens / sp);
    const double rows = g.groups * g.tokens;
    const double gate = m.gated_ffn ? 2.0 : 1.0;
    const double up = grouped_gemm_seconds(c, g.groups, g.tokens, g.width * gate, h);
    const double down = grouped_gemm_seconds(c, g.groups, g.tokens, h, g.width);
    const double act = memory_seconds(c, rows * g.width * pw.activation);
    const auto [cast_f, cast_b] =
        fp8_casts(rows, {fp8_linear_casts(h, g.width * gate, true), fp8_linear_casts(g.width, h, true)});
    const std::pair<double, double> routed{up + down + act + cast_f, 2 * (up + down) + 2 * act + cast_b};
    const auto shared = ffn_cost(static_cast<double>(x.expert_ffn), tokens * x.shared_experts);
    // The router and the token permutation around the experts (moe_routing.hpp); the router's
    // GEMM is not an FP8 linear layer, so it runs in 16 bits.
    const MoeRoutingCost routing = moe_routing_cost(m, a, tokens / sp, o.precision);
    ffn = {routed.first + shared.first + routing.forward, routed.second + shared.second + routing.backward};
    const double expert = (m.gated_ffn ? 3.0 : 2.0) * h * static_cast<double>(x.expert_ffn);
    out.shared_expert_forward = shared.first;
    out.shared_expert_backward = shared.second;
    ffn_params = static_cast<double>(x.experts) / static_cast<double>(std::max<long>(1, l.ep)) * expert /
                     static_cast<double>(l.expert_tp()) +
                 x.shared_experts * expert / t;
  } else {
    ffn = ffn_cost(static_cast<double>(m.ffn), tokens);
    out.ffn_entry_gemm = gemm_seconds(c, tokens, static_cast<double>(m.ffn) * (m.gated_ffn ? 2.0 : 1.0) / t, h);
    out.ffn_exit_gemm = gemm_seconds(c, tokens, h, static_cast<double>(m.ffn) / t);
    ffn_params = (m.gated_ffn ? 3.0 : 2.0) * h * static_cast<double>(m.ffn) / t;
  }
  out.ffn_forward = ffn.first + elementwise;
  out.ffn_backward = ffn.second + 2 * elementwise;

  // Each half's kernels, launched one by one: every non-GEMM kernel pays the device floor, and
  // the half takes at least as long as the host needs to enqueue its kernels (kernel_launch.hpp).
  // Recomputation below re-runs these bounded passes.
  if (c.launch != nullptr) {
    const LayerKernels& k = c.launch->layer(o.kernels);
    auto bound = [&](double& seconds, double gemm, double other) {
      const double device = seconds + other * c.launch->device_floor_s();
      const double bounded = launch_bound_seconds(seconds, other, gemm + other, *c.launch);
      out.launch_s += bounded - seconds;
      out.host_wait_s += bounded - device;
      seconds = bounded;
    };
    bound(out.attention_forward, k.attention.forward_gemm, k.attention.forward_other);
    bound(out.attention_backward, k.attention.backward_gemm, k.attention.backward_other);
    bound(out.ffn_forward, k.ffn.forward_gemm, k.ffn.forward_other);
    bound(out.ffn_backward, k.ffn.backward_gemm, k.ffn.backward_other);
  }

  // Recomputation: full re-runs the forward before the backward; selective the attention core.
  if (o.recompute == Recompute::full) {
    out.attention_backward += out.attention_forward;
    out.ffn_backward += out.ffn_forward;
  } else if (o.recompute == Recompute::selective) {
    out.attention_backward += core_f;
  } else if (o.recompute == Recompute::selective_op) {
    // torchtitan's per-operator policy saves the attention's output and every other matmul's
    // (counting aten.mm calls through a layer: wq, wk, wv, wo, w1, w3, w2), and recomputes the
    // rest: every element-wise kernel, and the second, fourth and sixth matmuls (wk; wo; w3 of a
    // gated FFN, w2 of a plain one). Grouped expert GEMMs are not aten.mm: an MoE layer
    // recomputes only its element-wise kernels there.
    const double f = static_cast<double>(m.ffn);
    out.attention_backward += gemm_seconds(c, tokens, kv / t, h) + proj + elementwise + attention_inputs;
    out.ffn_backward += elementwise;
    if (!(moe_layer && m.moe))
      out.ffn_backward += (m.gated_ffn ? gemm_seconds(c, tokens, f / t, h) : out.ffn_exit_gemm) +
                          memory_seconds(c, tokens * f / t * pw.activation);
  }
  out.attention_core_forward = core_f;
  out.attention_core_backward = core_b;
  if (l.cp > 1) out.cp_chunk_bytes = 2 * tokens * kv / t * e;  // this TP rank's heads
  if (moe_layer && m.moe && l.ep > 1) out.dispatch_bytes = tokens / sp * m.moe->top_k * h * e;
  // Each TP collective moves the micro-batch's hidden states.
  out.tp_bytes = l.tp > 1 ? tokens * h * e : 0;
  // Gradients as DDP reduces them: fp32 main gradients (4 bytes), Megatron's default for mixed
  // precision and what fp32 training has anyway.
  const double attention_params = mla ? mla->params : (2 * h * q + 2 * h * kv) / t;
  out.gradient_bytes = (attention_params + ffn_params) * 4.0;
  return out;
}

}  // namespace gf::work
