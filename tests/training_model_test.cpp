// The training model's arithmetic: parameters from the architecture against published counts,
// FLOPs in the papers' conventions, and memory per GPU against the ZeRO and Korthikanti et al.
// formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "test_support.hpp"
#include "work/compute_efficiency.hpp"
#include "work/layer_cost.hpp"
#include "work/model_library.hpp"
#include "work/model_size.hpp"
#include "work/pointwise_traffic.hpp"
#include "work/train_step.hpp"
#include "work/training_memory.hpp"

namespace gf::work {
namespace {

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.head_dim = 128;
  m.ffn = 4 * 12288;
  m.seq = 2048;
  m.vocab = 50257;
  m.tied_embeddings = true;
  m.learned_positions = true;
  m.linear_bias = true;
  m.layer_norm = true;
  return m;
}

ModelSpec llama2_70b() {
  ModelSpec m;
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn = 28672;
  m.gated_ffn = true;
  m.seq = 4096;
  m.vocab = 32000;
  return m;
}

ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn = 14336;
  m.gated_ffn = true;
  m.seq = 4096;
  m.vocab = 32000;
  m.moe = MoeSpec{8, 2, 0, 14336, 0, 1.0};
  return m;
}

TEST(ModelSize, ParametersMatchPublishedCounts) {
  // GPT-3 175B (Brown et al. 2020, Table 2.1): "175.0B".
  EXPECT_NEAR(count_parameters(gpt3_175b()).total / 175.0e9, 1.0, 0.005);
  // Llama 2 70B: 68,976,648,192 parameters in the released checkpoint.
  EXPECT_NEAR(count_parameters(llama2_70b()).total, 68976648192.0, 1e6);
  // Mixtral 8x7B (Jiang et al. 2024): 46.7B total, 12.9B active per token.
  const auto mix = count_parameters(mixtral_8x7b());
  EXPECT_NEAR(mix.total / 46.7e9, 1.0, 0.005);
  EXPECT_NEAR(mix.active / 12.9e9, 1.0, 0.005);
}

TEST(ModelSize, HardwareFlopsFollowMegatronsEquation3) {
  // Megatron's 145.6B configuration (Narayanan et al. SC'21, Table 1) with full recomputation:
  // 96 B s l h^2 (1 + s / 6h + V / 16 l h) per step, i.e. per token divided by B s.
  ModelSpec m;
  m.layers = 80;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.head_dim = 128;
  m.ffn = 4 * 12288;
  m.seq = 2048;
  m.vocab = 51200;
  const double l = 80, h = 12288, s = 2048, v = 51200;
  const double eq3 = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  const auto f = training_flops(m, Recompute::full);
  EXPECT_NEAR(f.hardware / eq3, 1.0, 1e-3);
  // Without recomputation it is three passes, not four (Eq. 3's 96 becomes 72 for the layers).
  EXPECT_NEAR(f.model / (72 * l * h * h * (1 + s / (6 * h)) + 6 * v * h), 1.0, 1e-3);
  EXPECT_GT(f.hardware, f.model);
  EXPECT_DOUBLE_EQ(training_flops(m, Recompute::none).hardware, f.model);
}

// ZeRO (Rajbhandari et al. SC'20, Figure 1): a 7.5B model on 64 data-parallel GPUs needs 120,
// 31.4, 16.6 and 1.9 GB for model states at stages 0 to 3.
TEST(TrainingMemory, ZeroStagesMatchThePaper) {
  ModelSpec m;
  m.kind = ModelKind::generic;
  m.params = 7.5e9;
  ParallelLayout l;
  l.dp = 64;
  MemoryOptions o;
  o.precision = Precision::fp16;
  o.bucket_bytes = 0;
  o.fragmentation = 0;
  auto states = [&](Sharding s) {
    o.sharding = s;
    const auto r = training_memory(m, l, o);
    return (r.weights + r.gradients + r.optimizer) / 1e9;
  };
  EXPECT_NEAR(states(Sharding::zero1), 31.4, 0.1);
  EXPECT_NEAR(states(Sharding::zero2), 16.6, 0.1);
  EXPECT_NEAR(states(Sharding::zero3), 1.875, 0.01);
  o.sharding = Sharding::none;
  o.distributed_optimizer = false;
  // Megatron's own accounting without ZeRO: 20 bytes per parameter for fp16 (its fp32 main
  // gradients beside the fp16 ones), 18 for bf16.
  EXPECT_NEAR(training_memory(m, l, o).bytes_per_param, 20.0, 1e-9);
  o.precision = Precision::bf16;
  EXPECT_NEAR(training_memory(m, l, o).bytes_per_param, 18.0, 1e-9);
  o.distributed_optimizer = true;
  EXPECT_NEAR(training_memory(m, l, o).bytes_per_param, 6.0 + 12.0 / 64, 1e-9);
  // Megatron's table for fp16 with its distributed optimizer: 4 + 16/d (the fp32 gradient copy is
  // sharded with the optimizer state); fp32: 8 + 8/d.
  o.precision = Precision::fp16;
  EXPECT_NEAR(training_memory(m, l, o).bytes_per_param, 4.0 + 16.0 / 64, 1e-9);
  o.precision = Precision::fp32;
  EXPECT_NEAR(training_memory(m, l, o).bytes_per_param, 8.0 + 8.0 / 64, 1e-9);
}

// The breakdown's terms: bf16 Megatron keeps its fp32 main gradients as their own term (4 bytes
// a parameter, no 16-bit gradient); ZeRO keeps 16-bit gradients and none; NCCL's buffers are one
// ring connection per channel per communicator of NCCL's default Simple, LL and LL128 sizes;
// fragmentation is its fraction of the rest; the total is their sum.
TEST(TrainingMemory, BreakdownTermsFollowTheirRules) {
  ModelSpec m;
  m.kind = ModelKind::generic;
  m.params = 1e9;
  m.activation_bytes_per_sample = 1e6;
  ParallelLayout l;
  l.dp = 8;
  MemoryOptions o;
  o.precision = Precision::bf16;
  o.bucket_bytes = 0;
  const auto bf16 = training_memory(m, l, o);
  EXPECT_NEAR(bf16.main_gradients, 4e9, 1);
  EXPECT_EQ(bf16.gradients, 0);
  const double per_channel = 4.0 * 1024 * 1024 + 8.0 * 512 * 8 * 16 + 120.0 * 640 * 8 * 8;
  EXPECT_NEAR(bf16.nccl_buffers, 32 * per_channel, 1);  // one communicator (DP), 32 channels
  EXPECT_NEAR(bf16.buffers, bf16.nccl_buffers, 1);
  const double rest =
      bf16.weights + bf16.gradients + bf16.main_gradients + bf16.optimizer + bf16.activations + bf16.buffers;
  EXPECT_NEAR(bf16.fragmentation, 0.10 * rest, 1);
  EXPECT_NEAR(bf16.total, rest + bf16.fragmentation, 1);
  o.sharding = Sharding::zero1;
  const auto zero = training_memory(m, l, o);
  EXPECT_NEAR(zero.gradients, 2e9, 1);
  EXPECT_EQ(zero.main_gradients, 0);
  // One rank alone opens no communicator.
  l.dp = 1;
  EXPECT_EQ(training_memory(m, l, o).nccl_buffers, 0);
  EXPECT_EQ(nccl_buffer_bytes(1, 32), 0);
  EXPECT_NEAR(nccl_buffer_bytes(2, 16), 16 * per_channel, 1);
}

// Korthikanti et al. 2022, Section 4: bytes per layer for s b h with t-way tensor parallelism.
TEST(TrainingMemory, LayerActivationsFollowKorthikanti) {
  const ModelSpec m = gpt3_175b();
  ParallelLayout l;
  l.tp = 8;
  MemoryOptions o;
  o.attention = Attention::unfused;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  EXPECT_NEAR(layer_activation_bytes(m, l, o, false), sbh * (10 + 24 / t + 5 * a * s / (h * t)), 1);
  l.sequence_parallel = true;
  EXPECT_NEAR(layer_activation_bytes(m, l, o, false), sbh / t * (34 + 5 * a * s / h), 1);
  o.recompute = Recompute::selective;
  EXPECT_NEAR(layer_activation_bytes(m, l, o, false), sbh * 34 / t, 1);
  o.recompute = Recompute::full;
  EXPECT_NEAR(layer_activation_bytes(m, l, o, false), 2 * sbh / t, 1);
  // FlashAttention keeps no scores: the same as selective recomputation.
  o.recompute = Recompute::none;
  o.attention = Attention::flash;
  EXPECT_NEAR(layer_activation_bytes(m, l, o, false), sbh * 34 / t, 1);
}

TEST(TrainingMemory, PipelineStagesAndShardingSpreadTheModel) {
  const ModelSpec m = llama2_70b();
  MemoryOptions o;
  o.micro_batches = 32;
  ParallelLayout one;
  one.tp = 8;
  const auto whole = training_memory(m, one, o);
  ParallelLayout split = one;
  split.pp = 4;
  const auto staged = training_memory(m, split, o);
  EXPECT_LT(staged.weights, whole.weights / 3.5);
  EXPECT_EQ(staged.stage, 0);  // the first stage keeps the most micro-batches in flight
  o.recompute = Recompute::full;
  EXPECT_LT(training_memory(m, split, o).activations, staged.activations / 5);
  // A 70B model does not fit on one 80 GB GPU's worth of a TP-8 group without sharding.
  EXPECT_GT(whole.total, 80e9);
}

}  // namespace
}  // namespace gf::work

namespace gf::work {
namespace {

// Every model of the library loads, and its parameters counted from the architecture agree with
// the published figure (an exact checkpoint count where the file gives one) within 3%: the
// published figures are rounded (Megatron's "1.7B" is 1.652B by the paper's own formula).
TEST(ModelLibrary, EveryModelLoadsAndCountsAsPublished) {
  const auto library = model_library();
  ASSERT_GE(library.size(), 30u);
  for (const auto& e : library) {
    SCOPED_TRACE(e.name);
    const ModelSpec m = library_model(e.name);
    const auto p = count_parameters(m);
    EXPECT_NEAR(p.total / m.published_params, 1.0, 0.03);
    if (m.moe) {
      EXPECT_NEAR(p.active / m.published_active_params, 1.0, 0.03);
    }
  }
  EXPECT_EQ(count_parameters(library_model("llama3.1-8b")).total, 8030261248.0);
}

TEST(ModelLibrary, UnknownModelsAndBadFieldsAreInputErrors) {
  EXPECT_THROW(library_model("llama9-1t"), InputError);
  try {
    parse_model("name: x\nkind: decoder\nparams_total: 1\nsource: s\nlayers: -3\n", "m.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.yaml:5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_model("name: x\nkind: decoder\nparams_total: 1\nsource: s\nwidth: 3\n", "m.yaml"), InputError);
}

// The element-wise kernels' bytes, counted operator by operator (pointwise_traffic.cpp) for
// Llama 3.1 8B (hidden 4096, 32 query heads and 8 KV heads of 128, SwiGLU FFN) in bf16.
TEST(PointwiseTraffic, EagerCountsEveryOperatorsPassThroughMemory) {
  const ModelSpec m = library_model("llama3.1-8b");
  ParallelLayout l;
  const double h = 4096, q = 4096, kv = 1024;
  const auto fused = pointwise_bytes(m, l, Precision::bf16, Kernels::fused);
  EXPECT_DOUBLE_EQ(fused.norm_and_residual, 10 * h);  // norm 2 x 2 B, residual 3 x 2 B
  EXPECT_DOUBLE_EQ(fused.attention_inputs, 0);
  EXPECT_DOUBLE_EQ(fused.activation, 6);
  const auto eager = pointwise_bytes(m, l, Precision::bf16, Kernels::eager);
  // RMSNorm: upcast 6, pow 8, mean 4, multiply 8, downcast 6, weight 4; residual 6.
  EXPECT_DOUBLE_EQ(eager.norm_and_residual, 42 * h);
  // RoPE 20 B per Q and K element, repeat_kv 2 x (KV read + Q write) x 2 B, output copy 4 B.
  EXPECT_DOUBLE_EQ(eager.attention_inputs, 20 * (q + kv) + 4 * (q + kv) + 4 * q);
  EXPECT_DOUBLE_EQ(eager.activation, 10);  // SiLU 4 B, product 6 B

  // fp32 has no casts; TP divides the widths and sequence parallelism the tokens of the norms.
  EXPECT_DOUBLE_EQ(pointwise_bytes(m, l, Precision::fp32, Kernels::eager).norm_and_residual, (8 + 4 + 8 + 8 + 12) * h);
  l.tp = 4;
  l.sequence_parallel = true;
  const auto split = pointwise_bytes(m, l, Precision::bf16, Kernels::eager);
  EXPECT_DOUBLE_EQ(split.norm_and_residual, 42 * h / 4);
  EXPECT_DOUBLE_EQ(split.attention_inputs, eager.attention_inputs / 4);

  // A LayerNorm model with learned positions and full heads (GPT-3): one norm kernel, no RoPE,
  // no KV expansion; a plain GELU is one kernel either way.
  ModelSpec g = library_model("gpt3-175b");
  ParallelLayout one;
  const auto gpt = pointwise_bytes(g, one, Precision::bf16, Kernels::eager);
  EXPECT_DOUBLE_EQ(gpt.norm_and_residual, 10 * 12288.0);
  EXPECT_DOUBLE_EQ(gpt.attention_inputs, 4 * 12288.0);
  EXPECT_DOUBLE_EQ(gpt.activation, 4);
}

// FP8 linear layers: the transposed FP8 copy of the input (1 byte) and, where no kernel before
// writes FP8, the cast itself (2 read, 1 written); backward the output gradient's cast and
// transpose (2 read, 1 + 1 written).
TEST(PointwiseTraffic, Fp8CastsAroundALinearLayer) {
  const auto fused = fp8_linear_casts(4096, 6144, true);
  EXPECT_DOUBLE_EQ(fused.forward, 4096);
  EXPECT_DOUBLE_EQ(fused.backward, 4 * 6144);
  const auto cast = fp8_linear_casts(4096, 4096, false);
  EXPECT_DOUBLE_EQ(cast.forward, 4 * 4096);
}

// The loss over the vocabulary, per bf16 logit: Megatron's vocab-parallel cross-entropy on
// `output.float()` (upcast 2 + 4, max 4, subtract 8, exp 8, sum 4, divide 8; backward multiply 8
// and the downcast 4 + 2), PyTorch's `F.cross_entropy` (upcast 6, log_softmax three reads and a
// write 16; backward 4 + 4 + 8 + 4 and the downcast 6), and a fused kernel (two reads and the
// gradient written, then scaled). In fp32 the casts go. A step of a small model with a large
// vocabulary (GPT 1.7B, 131,072 entries) slows by several percent unfused; fused, by less.
TEST(PointwiseTraffic, CrossEntropyOverTheVocabulary) {
  const auto megatron = cross_entropy_bytes(Precision::bf16, Kernels::fused, false);
  EXPECT_DOUBLE_EQ(megatron.forward, 38);
  EXPECT_DOUBLE_EQ(megatron.backward, 14);
  const auto eager = cross_entropy_bytes(Precision::bf16, Kernels::eager, false);
  EXPECT_DOUBLE_EQ(eager.forward, 22);
  EXPECT_DOUBLE_EQ(eager.backward, 26);
  const auto fused = cross_entropy_bytes(Precision::bf16, Kernels::fused, true);
  EXPECT_DOUBLE_EQ(fused.forward, 6);
  EXPECT_DOUBLE_EQ(fused.backward, 4);
  EXPECT_DOUBLE_EQ(cross_entropy_bytes(Precision::fp32, Kernels::fused, false).forward, 32);

  const auto t = gf::test::preset("dgx-h100", {});
  // Megatron-Core's GPT 1.7B: GPT-3's architecture, 24 layers of 2,048 with 16 heads.
  ModelSpec m = gpt3_175b();
  std::tie(m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.vocab, m.seq) =
      std::tuple{24L, 2048L, 16L, 16L, 8192L, 131072L, 4096L};
  TrainOptions o;
  o.layout.dp = 8;
  o.global_batch = 32;
  const double unfused = train_step(t, m, o).step_s;
  o.memory.cross_entropy_fusion = true;
  const double with_fusion = train_step(t, m, o).step_s;
  m.vocab = 32000;
  const double small_vocab = train_step(t, m, o).step_s;
  EXPECT_GT(unfused / with_fusion, 1.03);
  EXPECT_LT(unfused / with_fusion, 1.2);
  EXPECT_GT(with_fusion, small_vocab);
}

// Each GPU takes the sustained GEMM ceiling measured on it where data/compute/efficiency.yaml has
// one (the 300 W PCIe A100), else its family's first-listed one: the HGX H200's sustained rate
// (MSMF) stands for the H100 SXM (same die, same 700 W), an 8192^3 GEMM on random data for the
// SXM A100s, and the short-burst figures (MAMF, `kind: burst`) are never used as rates.
TEST(ComputeEfficiency, EachGpuTakesItsOwnCeiling) {
  const auto& eff = ComputeEfficiency::builtin();
  const auto& cat = hw::Catalog::builtin();
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("a100-sxm4-80gb"), Precision::bf16).ceiling, 0.824);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("a100-sxm4-40gb"), Precision::bf16).ceiling, 0.824);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("a100-pcie-80gb"), Precision::bf16).ceiling, 0.811);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("h200-sxm"), Precision::bf16).ceiling, 0.716);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("h100-sxm5"), Precision::bf16).ceiling, 0.716);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("h200-sxm"), Precision::fp8).ceiling, 0.651);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("h100-sxm5"), Precision::fp8).ceiling, 0.651);
  EXPECT_DOUBLE_EQ(eff.gemm(cat.gpu("b200"), Precision::bf16).ceiling, 0.647);
  // A burst figure still sets the size sweep's fixed per-kernel cost: a kernel costs more than
  // its FLOPs at the sustained rate alone.
  EXPECT_GT(eff.gemm(cat.gpu("h100-sxm5"), Precision::bf16).fixed_s, 0.0);
}

// torchtitan's per-op selective checkpointing recomputes wk, wo and w3 of each layer: the
// hardware FLOPs exceed the model FLOPs by exactly those matmuls.
TEST(ModelSize, PerOpSelectiveRecomputesEveryOtherMatmul) {
  const ModelSpec m = library_model("llama3.1-8b");
  const auto none = training_flops(m, Recompute::none);
  const auto op = training_flops(m, Recompute::selective_op);
  EXPECT_DOUBLE_EQ(op.model, none.model);
  EXPECT_DOUBLE_EQ(op.hardware - none.hardware, 2.0 * 4096 * 32 * (1024 + 4096 + 14336));
}

// cuDNN's fused attention (what Transformer Engine runs on Hopper) has its own published curves:
// at head dim 128 it sits between FlashAttention-2 and FlashAttention-3 forward at long causal
// sequences (the FA3 paper's Fig. 5: 335 < 539 < 616 TFLOP/s at 16k), and a family without cuDNN
// figures (Ampere) falls back to its FlashAttention figures rather than to a made-up number.
// Every published figure is a short burst at the boost clock; a step runs at the clock settled
// at the power limit, so each is scaled by Hopper's sustained/burst matmul ratio (H200: 708.5
// sustained against 841.9 burst in the same table).
TEST(ComputeEfficiency, CudnnAttentionHasItsOwnCurves) {
  constexpr double sustained = 0.716 / 0.851;
  const auto& eff = ComputeEfficiency::builtin();
  const auto& cat = hw::Catalog::builtin();
  const auto& h100 = cat.gpu("h100-sxm5");
  const double fa2 = eff.attention(h100, Precision::bf16, 16384, 128, true, false, "flash-attention-2");
  const double cudnn = eff.attention(h100, Precision::bf16, 16384, 128, true, false, "cudnn");
  const double fa3 = eff.attention(h100, Precision::bf16, 16384, 128, true, false, "flash-attention-3");
  EXPECT_NEAR(cudnn, sustained * 539 / 989.4, 0.002);
  EXPECT_LT(fa2, cudnn);
  EXPECT_LT(cudnn, fa3);
  // Its causal backward (cudnn-frontend's cuDNN 9.1 table) is below its non-causal backward.
  const double causal_bwd = eff.attention(h100, Precision::bf16, 16384, 128, true, true, "cudnn");
  EXPECT_NEAR(causal_bwd, sustained * 497.7 / 989.4, 0.002);
  EXPECT_LT(causal_bwd, eff.attention(h100, Precision::bf16, 16384, 128, false, true, "cudnn"));
  const auto& a100 = cat.gpu("a100-sxm4-80gb");
  EXPECT_DOUBLE_EQ(eff.attention(a100, Precision::bf16, 4096, 128, true, false, "cudnn"),
                   eff.attention(a100, Precision::bf16, 4096, 128, true, false, "flash-attention-3"));
}

// Ampere has FlashAttention-2's forward + backward curves (the FA2 paper's A100 figure): one
// rate for either pass, causal below non-causal, at Ampere's sustained/burst ratio (257 / 271.2).
TEST(ComputeEfficiency, AmpereUsesFlashAttention2ForwardBackwardCurves) {
  const auto& eff = ComputeEfficiency::builtin();
  const auto& cat = hw::Catalog::builtin();
  const auto& a100 = cat.gpu("a100-sxm4-80gb");
  constexpr double sustained = 0.824 / 0.869;
  const double fwd = eff.attention(a100, Precision::bf16, 2048, 128, true, false, "flash");
  EXPECT_NEAR(fwd, sustained * 155 / 312, 0.002);
  EXPECT_DOUBLE_EQ(fwd, eff.attention(a100, Precision::bf16, 2048, 128, true, true, "flash-attention-2"));
  EXPECT_LT(fwd, eff.attention(a100, Precision::bf16, 2048, 128, false, false, "flash-attention-2"));
  EXPECT_NEAR(eff.attention(a100, Precision::bf16, 16384, 64, true, false, "flash-attention-2"), sustained * 171 / 312,
              0.002);
}

// Element-wise and norm kernels run at the median of the published framework-kernel rows of the
// GPU's family (ATen, torch.compile, Megatron's fusions): on H100 between the stock kernels'
// ~52% and torch.clone's 90%; B200's rows sit higher; a GPU without rows of its family (V100)
// takes the median over every row. The hand-fused rows (QuACK, Liger) do not move it.
TEST(ComputeEfficiency, MemoryBoundKernelsRunAtTheFrameworkMedian) {
  const auto& eff = ComputeEfficiency::builtin();
  const auto& cat = hw::Catalog::builtin();
  const double h100 = eff.kernel_memory_fraction(cat.gpu("h100-sxm5"));
  EXPECT_NEAR(h100, 0.55, 0.01);
  EXPECT_DOUBLE_EQ(h100, eff.kernel_memory_fraction(cat.gpu("h200-sxm")));  // same family
  EXPECT_NEAR(eff.kernel_memory_fraction(cat.gpu("a100-sxm4-80gb")), 0.54, 0.01);
  EXPECT_GT(eff.kernel_memory_fraction(cat.gpu("b200")), h100);
  const double v100 = eff.kernel_memory_fraction(cat.gpu("v100-sxm2-32gb"));
  EXPECT_GT(v100, 0.5);
  EXPECT_LT(v100, 0.6);
  // A row with a fraction outside (0, 1] or none, or not a map at all, is an error naming the
  // file and line, not a silent default.
  for (const char* bad :
       {"families: []\nmemory_bound:\n  - {id: x, gpu: h100-sxm5, implementation: framework, fraction: 1.5}\n",
        "families: []\nmemory_bound:\n  - {id: x, gpu: h100-sxm5, implementation: framework}\n",
        "families: []\nmemory_bound:\n  - 7\n"}) {
    try {
      (void)ComputeEfficiency::parse(bad, "eff.yaml");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("eff.yaml"), std::string::npos) << e.what();
    }
  }
  // A memory-bound kernel's time follows: bytes / (HBM x fraction).
  const ComputeContext c = resolve_rates({cat.gpu("h100-sxm5"), Precision::bf16, eff});
  EXPECT_NEAR(memory_seconds(c, 1e9), 1e9 / (cat.gpu("h100-sxm5").memory_bandwidth.value() * h100), 1e-12);
}

}  // namespace
}  // namespace gf::work
