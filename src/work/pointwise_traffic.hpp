#pragma once
// HBM bytes the element-wise kernels between a transformer layer's GEMMs move per token: the
// norms, residual adds, rotary embedding, grouped-query key/value expansion and the FFN's
// activation. How many bytes depends less on the model than on how the framework runs them:
// fused into a few kernels (Megatron-LM with Transformer Engine or Apex, torch.compile), or one
// kernel per PyTorch operator with fp32 upcasts between them (PyTorch eager, as torchtitan and
// Hugging Face models run without torch.compile).
#include "work/model_spec.hpp"
#include "work/parallel_layout.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

// Forward bytes on one GPU. The backward of each kernel reads its output's gradient and its
// saved input and writes the input's gradient: callers charge it twice the forward.
struct PointwiseBytes {
  double norm_and_residual = 0;  // per token, each half of a layer: its norm and its residual add
  double attention_inputs = 0;   // per token: rotary embedding, GQA key/value expansion, layout copies
  double activation = 0;         // per FFN element (width / TP) of each token the FFN runs
};

// Under `layout`: TP divides the attention and FFN widths; with sequence parallelism the norms
// and residuals run on 1/TP of the tokens.
PointwiseBytes pointwise_bytes(const ModelSpec& m, const ParallelLayout& layout, Precision precision, Kernels kernels);

// The loss over the vocabulary: HBM bytes per logit (one token's score for one vocabulary entry
// this GPU holds), forward and backward. The logits leave the output projection in the
// activations' width and the loss runs in fp32, one elementwise or row-reduction kernel at a time,
// unless the framework fuses it (`fused`: Transformer Engine's cross-entropy kernel, Megatron's
// --cross-entropy-loss-fusion), which reads the logits twice and writes their gradient once.
struct LossBytes {
  double forward = 0;
  double backward = 0;
};
LossBytes cross_entropy_bytes(Precision precision, Kernels kernels, bool fused);

// FP8 linear layers (Transformer Engine's; torchao's Float8Linear makes the same casts): bytes
// per token around one GEMM of `in` input and `out` output elements per token. Forward: the
// input cast to FP8 (read 16 bits, write 8) unless the kernel before it writes FP8 already (TE
// fuses the cast into the norm before QKV and FC1 and into the activation before FC2), and its
// transposed FP8 copy that the weight gradient reads. Backward: the output gradient cast to FP8
// with its transpose (read 16 bits, write 8 twice).
struct Fp8CastBytes {
  double forward = 0;
  double backward = 0;
};
Fp8CastBytes fp8_linear_casts(double in, double out, bool input_cast_fused);

}  // namespace gf::work
