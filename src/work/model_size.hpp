#pragma once
// How big a model is and how much arithmetic a token costs: parameters counted from the
// architecture, and training FLOPs in the two conventions papers report.
//
// Model FLOPs (what MFU divides by): 6 x the parameters a token passes through, plus the
// attention's score and value products, 12 x layers x attention width x sequence per token
// (PaLM, Chowdhery et al. 2022, appendix B; the Llama 3 paper's MFU uses the same), with no
// recomputation. Hardware FLOPs (what HFU divides by) add the forward passes recomputation runs
// again (Megatron-LM, Narayanan et al. SC'21, Eq. 3 with full recomputation: four forward
// passes' worth instead of three).
#include "core/enum_names.hpp"
#include "work/model_spec.hpp"

namespace gf::work {

struct ParameterCount {
  double total = 0;      // every weight
  double active = 0;     // what one token passes through (MoE: top-k and shared experts)
  double embedding = 0;  // input embedding (and learned positions)
  double output = 0;     // output projection (0 when tied to the embedding)
  double per_layer = 0;  // a dense layer's weights (attention + FFN + norms)
  double moe_layer = 0;  // an MoE layer's weights, every expert (0 without MoE)
  double attention = 0;  // one layer's attention weights
};

ParameterCount count_parameters(const ModelSpec& m);

// Activation recomputation: none; Megatron's selective (the attention core, Korthikanti et al.
// 2022); torchtitan's per-operator selective (element-wise kernels and every other matmul);
// full (the whole layer).
enum class Recompute { none, selective, selective_op, full };
inline constexpr EnumNames<Recompute, 4> kRecomputeNames{{{Recompute::none, "none"},
                                                          {Recompute::selective, "selective"},
                                                          {Recompute::selective_op, "selective-op"},
                                                          {Recompute::full, "full"}}};
const char* to_string(Recompute r);

struct TokenFlops {
  double model = 0;     // training FLOPs per token, model convention
  double hardware = 0;  // training FLOPs per token with recomputation counted
  double forward = 0;   // one forward pass per token
};

// Per token at the model's sequence length (generic models: per sample).
TokenFlops training_flops(const ModelSpec& m, Recompute recompute);

}  // namespace gf::work
