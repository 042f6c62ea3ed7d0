#pragma once
// What one transformer layer costs one GPU for one micro-batch: its GEMMs, FlashAttention and
// memory-bound kernels timed against the GPU's peaks and the published efficiencies
// (compute_efficiency), split in the halves tensor parallelism separates by a collective
// (attention, then the FFN), forward and backward; and the bytes those collectives move.
#include "hw/gpu.hpp"
#include "work/compute_efficiency.hpp"
#include "work/kernel_launch.hpp"
#include "work/model_spec.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct ComputeContext {
  const hw::GpuSpec& gpu;
  Precision precision;
  const ComputeEfficiency& efficiency;
  const char* attention_kernel = "flash-attention-3";  // the curves FlashAttention is timed with
  double gemm_ceiling = 0;  // a measured fraction of peak in place of the published one (0: published)
  // The per-kernel device floor and host enqueue interval a training step's layers pay
  // (kernel_launch.hpp); null: none (a kernel's time alone, as the serving model times them).
  const KernelLaunch* launch = nullptr;
  // Filled by `resolve_rates`: the peak, GEMM rate and SM count, looked up by name once rather
  // than for every GEMM (the planner prices hundreds of thousands of them). Unresolved, every
  // call looks them up.
  bool resolved = false;
  double peak = 0;
  double ceiling = 0;
  double ceiling_k = 0;        // the depth the ceiling was measured at
  double tile_overhead_k = 0;  // each tile's prologue and epilogue, in k-steps
  double fixed_s = 0;
  int sms = 0;
  double kernel_memory_fraction = 0;  // of HBM bandwidth, for memory_seconds
};

// `c` with its rates looked up once (see ComputeContext::resolved).
ComputeContext resolve_rates(ComputeContext c);

// Dense peak FLOP/s of the GPU for the precision's matmuls (fp32 training runs TF32).
double peak_flops(const ComputeContext& c);

// Tile and wave quantization (NVIDIA's "Matrix Multiplication Background" performance guide):
// `groups` GEMMs of m x n outputs (the experts of a grouped MoE GEMM) cut in 128 x 128 tiles over
// `sms` SMs; a partial tile costs a whole one and the last wave runs part-empty, and with fewer
// tiles than SMs the library splits K (split-K, stream-K) so only the partial tiles are lost.
// Returns the work done over the work needed (>= 1); 1 when the SM count is unknown (0).
double gemm_quantization(double m, double n, double groups, int sms);

// One GEMM of (m x k) by (k x n): the fixed cost plus the roofline of its FLOPs and bytes.
double gemm_seconds(const ComputeContext& c, double m, double n, double k);
// FlashAttention over `heads` heads of `head_dim`, `queries` against `keys` per sequence.
double attention_seconds(const ComputeContext& c, double batch, double heads, double queries, double keys,
                         long head_dim, bool causal, bool backward);
// Attention without FlashAttention (Megatron-LM before 2023, BERT in PyTorch): the scores are
// written to HBM, softmax and dropout stream them, batched GEMMs on either side.
double unfused_attention_seconds(const ComputeContext& c, double batch, double heads, double queries, double keys,
                                 long head_dim, bool backward);
// A memory-bound kernel (element-wise, norm, loss, optimizer) moving `bytes` through HBM at the
// fraction such kernels reach on this GPU (ComputeEfficiency::kernel_memory_fraction).
double memory_seconds(const ComputeContext& c, double bytes);

struct TransformerLayerCost {
  double attention_forward = 0;  // QKV, attention, output projection, norm and residual
  double ffn_forward = 0;        // the FFN (or the experts) with its norm and residual
  double attention_backward = 0;
  double ffn_backward = 0;
  double tp_bytes = 0;        // bytes of each TP collective (an all-reduce, or an all-gather and a
                              // reduce-scatter with sequence parallelism), per half, per pass
  double gradient_bytes = 0;  // this GPU's gradients of the layer
  // Context parallelism (ring attention): the attention core's own time, which the exchange of
  // key/value chunks around the CP ring overlaps, and the bytes of one chunk (K and V).
  double attention_core_forward = 0;
  double attention_core_backward = 0;
  double cp_chunk_bytes = 0;
  // Expert parallelism: bytes each GPU sends in one all-to-all (dispatch or combine): its
  // tokens' hidden states, once per expert each is routed to.
  double dispatch_bytes = 0;
  // The shared experts' own time (forward, backward), which Megatron's --moe-shared-expert-overlap
  // runs beside the all-to-alls.
  double shared_expert_forward = 0;
  double shared_expert_backward = 0;
  // The GEMMs a TP collective can hide behind with Megatron's --tp-comm-overlap (forward
  // seconds): the all-gather feeds the first GEMM of each half (QKV, FC1) and the
  // reduce-scatter drains the last (the output projection, FC2). 0 where none (MoE experts).
  double attention_entry_gemm = 0;
  double attention_exit_gemm = 0;
  double ffn_entry_gemm = 0;
  double ffn_exit_gemm = 0;
  // What the per-kernel costs (ComputeContext::launch) add to the layer's four passes, and the
  // part of it that is the host enqueueing slower than the device runs (seconds, before
  // recomputation).
  double launch_s = 0;
  double host_wait_s = 0;
};

TransformerLayerCost transformer_layer_cost(const ModelSpec& m, const ParallelLayout& l, const MemoryOptions& o,
                                            const ComputeContext& c, bool moe_layer);

}  // namespace gf::work
