// The per-kernel launch costs a training step's layers pay (work/kernel_launch.hpp): a device
// floor per non-GEMM kernel and the host's enqueue interval, which only a layer whose kernels
// are shorter than the host's rate cannot hide.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "test_support.hpp"
#include "work/kernel_launch.hpp"
#include "work/layer_cost.hpp"
#include "work/model_library.hpp"

namespace gf::work {
namespace {

const char* kGood =
    "device_floor_us: 1\nhost_interval_us: 10\nlayer_kernels:\n"
    "  - {kernels: fused, source: s, attention: {forward_gemm: 2, forward_other: 5, backward_gemm: 4, "
    "backward_other: 9}, ffn: {forward_gemm: 2, forward_other: 3, backward_gemm: 4, backward_other: 5}}\n"
    "  - {kernels: eager, source: s, attention: {forward_gemm: 4, forward_other: 19, backward_gemm: 8, "
    "backward_other: 40}, ffn: {forward_gemm: 3, forward_other: 11, backward_gemm: 6, backward_other: 22}}\n";

// A stretch of kernels takes its device time plus each non-GEMM kernel's floor, unless the host
// enqueues them more slowly than that: then the host's time, and the device floor is hidden in it.
TEST(KernelLaunch, AStretchTakesTheSlowerOfDeviceAndHost) {
  const KernelLaunch k = KernelLaunch::parse(kGood, "k.yaml");
  EXPECT_DOUBLE_EQ(k.device_floor_s(), 1e-6);
  EXPECT_DOUBLE_EQ(k.host_interval_s(), 10e-6);
  // 1 ms of work in 10 kernels, 6 of them non-GEMM: the device's 1.006 ms beats the host's 0.1 ms.
  EXPECT_NEAR(launch_bound_seconds(1e-3, 6, 10, k), 1.006e-3, 1e-12);
  // 20 us of work in the same 10 kernels: the host's 100 us.
  EXPECT_NEAR(launch_bound_seconds(20e-6, 6, 10, k), 100e-6, 1e-12);
  EXPECT_DOUBLE_EQ(launch_bound_seconds(0, 0, 0, k), 0.0);
}

// Eager PyTorch (one kernel per operator, as torchtitan runs without torch.compile) launches
// more kernels per layer than Megatron's fused ones, so it is host-bound sooner.
TEST(KernelLaunch, EagerLayersLaunchMoreKernelsThanFusedOnes) {
  const KernelLaunch& k = KernelLaunch::builtin();
  const LayerKernels& fused = k.layer(Kernels::fused);
  const LayerKernels& eager = k.layer(Kernels::eager);
  EXPECT_GT(eager.attention.forward_other, fused.attention.forward_other);
  EXPECT_GT(eager.ffn.forward_other, fused.ffn.forward_other);
  EXPECT_GT(eager.attention.backward_other + eager.ffn.backward_other,
            fused.attention.backward_other + fused.ffn.backward_other);
  // Backward runs every GEMM twice (data and weight gradients).
  EXPECT_DOUBLE_EQ(fused.attention.backward_gemm, 2 * fused.attention.forward_gemm);
  EXPECT_DOUBLE_EQ(fused.ffn.backward_gemm, 2 * fused.ffn.forward_gemm);
  EXPECT_GT(k.host_interval_s(), k.device_floor_s());
}

struct LayerPair {
  TransformerLayerCost alone;   // kernels' own time
  TransformerLayerCost placed;  // with the launch costs
};

LayerPair layer_costs(const std::string& model, const std::string& gpu, long tp, long micro_batch, Kernels kernels) {
  const ModelSpec m = library_model(model);
  ParallelLayout l;
  l.tp = tp;
  l.sequence_parallel = tp > 1;
  MemoryOptions o;
  o.micro_batch = micro_batch;
  o.kernels = kernels;
  const hw::Catalog catalog = hw::Catalog::builtin();  // by value: the context keeps a reference into it
  const ComputeContext bare = resolve_rates({catalog.gpu(gpu), Precision::bf16, ComputeEfficiency::builtin()});
  ComputeContext with = bare;
  with.launch = &KernelLaunch::builtin();
  return {transformer_layer_cost(m, l, o, bare, false), transformer_layer_cost(m, l, o, with, false)};
}

// GPT-3 Small (hidden 768) on one H100, one sequence of 2048 tokens: each half of the layer runs
// its kernels in less time than eager PyTorch takes to enqueue them, so the host sets the pace.
TEST(KernelLaunch, ATinyLayerIsHostBound) {
  const auto [alone, placed] = layer_costs("gpt3-125m", "h100-sxm5", 1, 1, Kernels::fused);
  const KernelLaunch& k = KernelLaunch::builtin();
  const HalfLayerKernels& a = k.layer(Kernels::fused).attention;
  const double host = (a.forward_gemm + a.forward_other) * k.host_interval_s();
  ASSERT_LT(alone.attention_forward, host);
  EXPECT_DOUBLE_EQ(placed.attention_forward, host);
  const double layer_alone =
      alone.attention_forward + alone.ffn_forward + alone.attention_backward + alone.ffn_backward;
  const double layer_placed =
      placed.attention_forward + placed.ffn_forward + placed.attention_backward + placed.ffn_backward;
  EXPECT_GT(layer_placed, 1.15 * layer_alone);
  // Eager kernels: more launches, slower still.
  const auto eager = layer_costs("gpt3-125m", "h100-sxm5", 1, 1, Kernels::eager).placed;
  EXPECT_GT(eager.attention_forward, placed.attention_forward);
}

// Llama 3.1 70B under TP 8 on H100 (8k tokens a micro-batch): every half is device-bound, and
// the device floor of its few non-GEMM kernels adds well under a percent.
TEST(KernelLaunch, ABigLayerIsNotHostBound) {
  const auto [alone, placed] = layer_costs("llama3.1-70b", "h100-sxm5", 8, 1, Kernels::fused);
  const KernelLaunch& k = KernelLaunch::builtin();
  const LayerKernels& n = k.layer(Kernels::fused);
  EXPECT_NEAR(placed.attention_forward, alone.attention_forward + n.attention.forward_other * k.device_floor_s(),
              1e-12);
  EXPECT_NEAR(placed.ffn_backward, alone.ffn_backward + n.ffn.backward_other * k.device_floor_s(), 1e-12);
  const double layer_alone =
      alone.attention_forward + alone.ffn_forward + alone.attention_backward + alone.ffn_backward;
  const double layer_placed =
      placed.attention_forward + placed.ffn_forward + placed.attention_backward + placed.ffn_backward;
  EXPECT_GT(layer_placed, layer_alone);
  EXPECT_LT(layer_placed, 1.01 * layer_alone);
}

// `train` says what launches add where they add over 1% of a layer (GPT-3 125M on H100, mostly
// the GPU waiting for the host), and nothing where they do not (GPT-3 2.7B).
TEST(KernelLaunch, TrainSaysWhatLaunchesAddWhereTheyMatter) {
  const auto small = test::run_cli({"train", "dgx-h100", "--model", "gpt3-125m"});
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_NE(small.out.find("kernel launches add"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("waiting for the host"), std::string::npos) << small.out;
  const auto big = test::run_cli({"train", "dgx-h100", "--model", "gpt3-2.7b"});
  ASSERT_EQ(big.code, 0) << big.err;
  EXPECT_EQ(big.out.find("kernel launches add"), std::string::npos) << big.out;
}

// A malformed file is an InputError naming the file, never a silent default.
TEST(KernelLaunch, BadFilesAreRefusedWithTheirField) {
  const std::string good = kGood;
  for (const std::string& bad : {
           std::string("host_interval_us: 10\nlayer_kernels: []\n"),  // no device floor
           std::string("device_floor_us: 1\nhost_interval_us: -3\nlayer_kernels: []\n"),
           good.substr(0, good.find("  - {kernels: eager")),  // no eager entry
           good +
               "  - {kernels: fused, source: s, attention: {forward_gemm: 1, forward_other: 1, backward_gemm: 1, "
               "backward_other: 1}, ffn: {forward_gemm: 1, forward_other: 1, backward_gemm: 1, backward_other: 1}}\n",
           std::string(kGood).replace(std::string(kGood).find("forward_other: 5"), 16, "forward_other: -5"),
           std::string(kGood).replace(std::string(kGood).find("source: s"), 9, "note: n"),  // uncited counts
       }) {
    try {
      (void)KernelLaunch::parse(bad, "k.yaml");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("k.yaml"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gf::work
