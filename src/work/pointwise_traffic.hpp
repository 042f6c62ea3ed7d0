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

}  // namespace gf::work
