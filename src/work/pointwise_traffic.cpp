#include "work/pointwise_traffic.hpp"

namespace gf::work {

namespace {

// PyTorch eager upcasts a narrow activation to fp32 for numerically sensitive operators and casts
// back after: each cast is a kernel that reads one width and writes the other (none in fp32).
double upcast(double e) { return e < 4 ? e + 4 : 0; }
double downcast(double e) { return e < 4 ? 4 + e : 0; }

// RMSNorm per element as PyTorch eager runs it, both torchtitan's module (`x.float()`, then
// `x * rsqrt(x.pow(2).mean(-1) + eps)`, `.type_as(x)`, `* weight`) and torch's composite
// `rms_norm`: the upcast, pow (read and write fp32), the row mean (read fp32; its output is one
// value per row), the multiply by the reciprocal (read and write fp32), the downcast and the
// weight multiply (read and write the activation width).
double eager_rms_norm(double e) { return upcast(e) + 8 + 4 + 8 + downcast(e) + 2 * e; }

}  // namespace

PointwiseBytes pointwise_bytes(const ModelSpec& m, const ParallelLayout& layout, Precision precision, Kernels kernels) {
  // FP8 training (Transformer Engine, torchao's Float8Linear) casts inside the linear layers;
  // the activations between them stay in bf16.
  const double e = precision == Precision::fp32 ? 4.0 : 2.0;
  const double t = static_cast<double>(layout.tp);
  const double sp = layout.sequence_parallel ? t : 1.0;
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.attention_width()) / t;
  const double kv = static_cast<double>(m.kv_heads * m.head_dim) / t;
  PointwiseBytes b;
  if (kernels == Kernels::fused) {
    // One norm kernel (read, write) and one residual add (two reads, a write); the activation
    // reads its input (both halves of a gated FFN) and writes its output. Fused RoPE and the
    // attention's layout live inside the attention kernels' own traffic.
    b.norm_and_residual = 5 * e * h / sp;
    b.activation = (m.gated_ffn ? 3.0 : 2.0) * e;
    return b;
  }
  // LayerNorm is one ATen kernel even in eager mode (read, write); RMSNorm is a chain of them.
  const double norm = m.layer_norm ? 2 * e : eager_rms_norm(e);
  b.norm_and_residual = (norm + 3 * e) * h / sp;
  // Rotary embedding on Q and K as torchtitan and Llama's reference code apply it: upcast, a
  // complex multiply (read and write fp32 pairs; the frequency table is small), downcast. Models
  // with a learned position table have none.
  const bool rotary = m.kind == ModelKind::decoder && !m.learned_positions;
  if (rotary) b.attention_inputs += (upcast(e) + 8 + downcast(e)) * (q + kv);
  // Grouped-query attention: `repeat_kv` expands K and V to every query head, a copy each (read
  // the KV width, write the query width).
  if (m.kv_heads < m.heads) b.attention_inputs += 2 * (kv + q) * e;
  // The attention output, transposed back to (batch, sequence, heads) and made contiguous.
  b.attention_inputs += 2 * q * e;
  // SwiGLU as `silu(w1(x)) * w3(x)`: the SiLU (read, write) and the product (two reads, a
  // write); a plain GELU is one kernel either way.
  b.activation = (m.gated_ffn ? 5.0 : 2.0) * e;
  return b;
}

LossBytes cross_entropy_bytes(Precision precision, Kernels kernels, bool fused) {
  const double e = precision == Precision::fp32 ? 4.0 : 2.0;
  if (fused) {
    // One pass for the row's running max and sum of exponentials, one that writes the gradient
    // (in the logits' width) already in the forward; backward scales it by the loss's gradient.
    return {3 * e, 2 * e};
  }
  if (kernels == Kernels::fused) {
    // Megatron's vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py) on
    // `output.float()`: the upcast, the row max (read), subtracting it in place (read, write),
    // exp in place (read, write), the row sum (read), dividing by it in place (read, write) to
    // keep the softmax for backward; backward multiplies it by the loss's gradient in place
    // (read, write) and the upcast's backward casts it down.
    return {upcast(e) + 4 + 8 + 8 + 4 + 8, 8 + downcast(e)};
  }
  // PyTorch eager `F.cross_entropy(logits.float(), labels)`: the upcast and log_softmax (a
  // pass for the row max, one for the sum of exponentials, one that writes the output); backward
  // writes nll_loss's dense gradient, log_softmax's backward reads it for the row sum and again
  // with the saved output to write the input's gradient, and the upcast's backward casts down.
  return {upcast(e) + 3 * 4 + 4, 4 + 4 + 8 + 4 + downcast(e)};
}

Fp8CastBytes fp8_linear_casts(double in, double out, bool input_cast_fused) {
  return {(input_cast_fused ? 0.0 : 3 * in) + in, 4 * out};
}

}  // namespace gf::work
