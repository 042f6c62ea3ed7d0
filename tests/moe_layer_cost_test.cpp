// The work an MoE layer does around its experts: the router's GEMM and the token permutation
// (src/work/moe_routing.cpp), and that the layer's cost carries it; DeepSeek's latent attention
// (src/work/mla_attention.cpp).
#include <gtest/gtest.h>

#include "hw/catalog.hpp"
#include "work/mla_attention.hpp"
#include "work/model_library.hpp"
#include "work/moe_routing.hpp"

namespace gf::work {
namespace {

// Mixtral 8x7B (hidden 4096, 8 experts) routing each token to `top_k` of them.
ModelSpec eight_experts(int top_k) {
  ModelSpec m = library_model("mixtral-8x7b");
  m.moe->top_k = top_k;
  return m;
}

ComputeContext h100_bf16() {
  static const auto catalog = hw::Catalog::builtin();
  return resolve_rates({catalog.gpu("h100-sxm5"), Precision::bf16, ComputeEfficiency::builtin()});
}

TEST(MoeRouting, DenseModelHasNone) {
  ModelSpec m = eight_experts(2);
  m.moe.reset();
  const auto r = moe_routing_cost(m, h100_bf16(), 8192, Precision::bf16);
  EXPECT_EQ(r.forward, 0);
  EXPECT_EQ(r.backward, 0);
}

// Forward: the gate GEMM, then permute (read T x h, write k T x h) and unpermute (read k T x h,
// write T x h) in 16 bits, and four passes over the fp32 scores; the backward moves the same
// bytes and runs the gate's two gradient GEMMs.
TEST(MoeRouting, BytesOfPermuteAndUnpermute) {
  const ComputeContext c = h100_bf16();
  const ModelSpec m = eight_experts(2);
  const double t = 8192, h = 4096;
  const auto r = moe_routing_cost(m, c, t, Precision::bf16);
  const double gate = gemm_seconds(c, t, 8, h);
  const double bytes = 2 * (t + 2 * t) * h * 2 + 4 * t * 8 * 4;
  EXPECT_NEAR(r.forward, gate + memory_seconds(c, bytes), 1e-12);
  EXPECT_NEAR(r.backward - r.forward, gate, 1e-12);
  // FP8 training permutes the 16-bit hidden states: the same bytes.
  EXPECT_NEAR(moe_routing_cost(m, c, t, Precision::fp8).forward, r.forward, 1e-12);
}

// The permutation grows with the copies each token makes: top-8 moves (1 + 8) / (1 + 2) = 3x
// the bytes of top-2.
TEST(MoeRouting, GrowsWithTopK) {
  const ComputeContext c = h100_bf16();
  const double t = 8192;
  const auto two = moe_routing_cost(eight_experts(2), c, t, Precision::bf16);
  const auto eight = moe_routing_cost(eight_experts(8), c, t, Precision::bf16);
  const double gate = gemm_seconds(c, t, 8, 4096);
  const double scores = memory_seconds(c, 4 * t * 8 * 4);
  EXPECT_NEAR((eight.forward - gate - scores) / (two.forward - gate - scores), 3.0, 1e-9);
}

// An MoE layer's FFN half carries the routing: DeepSeek-V3's MoE layer costs more than its
// experts, shared expert and norms alone would by at least the permutation's bytes.
TEST(MoeRouting, LayerCostCarriesIt) {
  static const auto catalog = hw::Catalog::builtin();
  const ModelSpec m = library_model("deepseek-v3");
  ParallelLayout l;
  l.ep = 8;
  MemoryOptions o;
  o.micro_batch = 1;
  o.precision = Precision::bf16;
  const ComputeContext c = resolve_rates({catalog.gpu("b200"), Precision::bf16, ComputeEfficiency::builtin()});
  const auto layer = transformer_layer_cost(m, l, o, c, true);
  const double tokens = static_cast<double>(m.seq);
  const auto routing = moe_routing_cost(m, c, tokens, Precision::bf16);
  const double permutation = memory_seconds(c, 2 * (tokens + 8 * tokens) * 7168 * 2);
  EXPECT_GE(routing.forward, permutation);
  EXPECT_GT(layer.ffn_forward, routing.forward + layer.shared_expert_forward);
  EXPECT_GT(layer.ffn_backward, routing.backward + layer.shared_expert_backward);
}

}  // namespace
}  // namespace gf::work

namespace gf::work {
namespace {

// DeepSeek-V3's latent attention: heads of 192 (query/key) and 128 (value), so the core costs
// FlashAttention's count at d = 160, where hidden / heads would say 56.
TEST(MlaAttention, CoreHeadDim) {
  const ModelSpec m = library_model("deepseek-v3");
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(mla_core_head_dim(*m.mla), 160);
  EXPECT_EQ(m.hidden / m.heads, 56);
}

// Its five projections: the two down projections duplicated on every TP rank, the two up
// projections and the output split over TP.
TEST(MlaAttention, ProjectionWeightsAndTensorParallelism) {
  const ModelSpec m = library_model("deepseek-v3");
  const ComputeContext c = h100_bf16();
  const double h = 7168, heads = 128;
  const double down = h * 1536 + h * (512 + 64);
  const double split = 1536 * heads * 192 + 512 * heads * (128 + 128) + heads * 128 * h;
  EXPECT_DOUBLE_EQ(mla_projections(*m.mla, m.hidden, m.heads, 1, c, 4096).params, down + split);
  EXPECT_DOUBLE_EQ(mla_projections(*m.mla, m.hidden, m.heads, 2, c, 4096).params, down + split / 2);
  // Fewer weights than a plain attention of the same hidden size and heads of 192 would have.
  EXPECT_LT(down + split, 4 * h * heads * 192);
}

// The layer's attention core and projections take the MLA shapes.
TEST(MlaAttention, LayerCostUsesThem) {
  static const auto catalog = hw::Catalog::builtin();
  const ModelSpec m = library_model("deepseek-v3");
  const ComputeContext c =
      resolve_rates({catalog.gpu("h100-sxm5"), Precision::bf16, ComputeEfficiency::builtin(), "cudnn"});
  ParallelLayout l;
  MemoryOptions o;
  o.micro_batch = 1;
  o.precision = Precision::bf16;
  o.attention = Attention::cudnn;
  const auto layer = transformer_layer_cost(m, l, o, c, false);
  const double s = static_cast<double>(m.seq);
  EXPECT_DOUBLE_EQ(layer.attention_core_forward, attention_seconds(c, 1, 128, s, s, 160, true, false));
  EXPECT_DOUBLE_EQ(layer.attention_entry_gemm, mla_projections(*m.mla, m.hidden, m.heads, 1, c, s).entry_seconds);
}

}  // namespace
}  // namespace gf::work
