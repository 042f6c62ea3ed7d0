// B200's compute as Blackwell's published kernels run it: attention from cuDNN's own B200 sweep
// (data/compute/efficiency.yaml, blackwell attention), at the clock a training step settles at.
#include <gtest/gtest.h>

#include "hw/catalog.hpp"
#include "work/compute_efficiency.hpp"
#include "work/layer_cost.hpp"

namespace gf::work {
namespace {

const hw::GpuSpec& catalog_b200() {
  static const auto catalog = hw::Catalog::builtin();
  return catalog.gpu("b200");
}

// B200 has published attention figures now: no "half of peak" guess.
TEST(B200Attention, TakesCudnnsB200Sweep) {
  const auto& e = ComputeEfficiency::builtin();
  EXPECT_TRUE(e.has_attention_figures(catalog_b200()));
  // cuDNN 9.13 at 8k, causal, head dim 128: 1171 TFLOP/s forward and 942 backward of 2250, in
  // bursts; a step runs them at the family's sustained/burst matmul ratio (1456.3 / 1745.0).
  const double sustained = (1456.3 / 2250) / (1745.0 / 2250);
  EXPECT_NEAR(e.attention(catalog_b200(), Precision::bf16, 8192, 128, true, false, "cudnn"), 0.521 * sustained, 0.003);
  EXPECT_NEAR(e.attention(catalog_b200(), Precision::bf16, 8192, 128, true, true, "cudnn"), 0.419 * sustained, 0.003);
  // The backward is slower than the forward at every length the sweep measured from 2k on.
  for (long s : {2048L, 4096L, 8192L, 32768L})
    EXPECT_LT(e.attention(catalog_b200(), Precision::bf16, s, 128, true, true, "cudnn"),
              e.attention(catalog_b200(), Precision::bf16, s, 128, true, false, "cudnn"))
        << s;
  // Short sequences reach far less than long ones (one 2k sequence: 0.213, one 32k: 0.631).
  EXPECT_LT(e.attention(catalog_b200(), Precision::bf16, 2048, 128, true, false, "cudnn"),
            0.5 * e.attention(catalog_b200(), Precision::bf16, 32768, 128, true, false, "cudnn"));
}

// The default kernel (the best FlashAttention) on B200 takes the cuDNN curve too: FlashAttention-2
// has no Blackwell kernel and no per-point FlashAttention-4 table is in the file.
TEST(B200Attention, DefaultKernelFallsBackToCudnn) {
  const auto& e = ComputeEfficiency::builtin();
  EXPECT_DOUBLE_EQ(e.attention(catalog_b200(), Precision::bf16, 4096, 128, true, false),
                   e.attention(catalog_b200(), Precision::bf16, 4096, 128, true, false, "cudnn"));
}

// Attention time on B200 follows the curve: the 8k backward at 786 sustained TFLOP/s, not at
// the 1125 that half of peak gave.
TEST(B200Attention, AttentionSecondsAtTheCurvesRate) {
  const auto& e = ComputeEfficiency::builtin();
  const ComputeContext c = resolve_rates({catalog_b200(), Precision::bf16, e, "cudnn"});
  const double flops = 4.0 * 2 * 32 * 8192.0 * 8192.0 * 128 * 0.5 * 2.5;  // 2 x 8k, 32 heads, backward
  const double t = attention_seconds(c, 2, 32, 8192, 8192, 128, true, true);
  const double rate = flops / t / 1e12;
  EXPECT_GT(rate, 740);
  EXPECT_LT(rate, 830);
}

}  // namespace
}  // namespace gf::work
