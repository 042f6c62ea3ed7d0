#include "work/moe_routing.hpp"

namespace gf::work {

MoeRoutingCost moe_routing_cost(const ModelSpec& m, const ComputeContext& c, double tokens, Precision precision) {
  if (!m.moe || tokens <= 0) return {};
  const auto& x = *m.moe;
  const double h = static_cast<double>(m.hidden);
  const double experts = static_cast<double>(x.experts);
  // Each token's copies, one per expert it is routed to (dispatch padding included).
  const double copies = tokens * x.top_k * x.capacity_factor;
  // Hidden states travel in the activations' type (16 bits; fp32 training in 32): FP8 recipes
  // quantize inside the experts' linear layers, after the permutation.
  const double e = precision == Precision::fp32 ? 4.0 : 2.0;
  const double permute = (tokens + copies) * h * e;    // gather: read each token once, write its copies
  const double unpermute = (copies + tokens) * h * e;  // weighted scatter-add back
  // Scores, the score function and top-k over [tokens, experts] in fp32: written by the GEMM's
  // epilogue, read and written by the score function, read by top-k.
  const double scores = 4 * tokens * experts * 4.0;
  const double gate = gemm_seconds(c, tokens, experts, h);
  const double moved = memory_seconds(c, permute + unpermute + scores);
  // Backward: the input and weight gradients of the gate, the same bytes through the reversed
  // gather and scatter and the score function's gradient.
  return {gate + moved, 2 * gate + moved};
}

}  // namespace gf::work
