#pragma once
// Memory one GPU needs to train a model under a parallel layout: weights, gradients and
// optimizer states (by ZeRO / FSDP stage or Megatron's distributed optimizer), activations (by
// recomputation, sequence parallelism and the micro-batches a pipeline keeps in flight),
// communication buffers and an allowance for the allocator's fragmentation.
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "work/model_size.hpp"
#include "work/nccl_buffers.hpp"
#include "work/parallel_layout.hpp"

namespace gf::work {

enum class Precision { fp32, fp16, bf16, fp8 };
// tf32: an fp32 run on tensor cores (what the validation rows of such runs say), modelled as fp32.
inline constexpr EnumNames<Precision, 5> kPrecisionNames{{{Precision::fp32, "fp32"},
                                                          {Precision::fp32, "tf32", true},
                                                          {Precision::fp16, "fp16"},
                                                          {Precision::bf16, "bf16"},
                                                          {Precision::fp8, "fp8"}}};
const char* to_string(Precision p);

// Optimizer-state sharding: DeepSpeed ZeRO stages, PyTorch FSDP's strategies.
enum class Sharding { none, zero1, zero2, zero3, fsdp_full, fsdp_grad_op, fsdp_hybrid };
const char* to_string(Sharding s);  // as the reports print it: "zero-2", "fsdp full"
// FSDP's sharding strategies by the names `--fsdp` and the validation rows use.
inline constexpr EnumNames<Sharding, 3> kFsdpNames{
    {{Sharding::fsdp_full, "full"}, {Sharding::fsdp_grad_op, "grad-op"}, {Sharding::fsdp_hybrid, "hybrid"}}};

// The attention kernels: FlashAttention (the best published for the GPU: FlashAttention-3 on
// Hopper), FlashAttention-2 (PyTorch's scaled_dot_product_attention, the flash-attn 2 package),
// cuDNN's fused attention (Transformer Engine's FusedAttention backend, which it prefers on
// Hopper), or unfused (scores written to HBM and streamed by softmax and dropout kernels).
enum class Attention { flash, flash2, cudnn, unfused };
inline constexpr EnumNames<Attention, 4> kAttentionNames{{{Attention::flash, "flash"},
                                                          {Attention::flash2, "flash2"},
                                                          {Attention::cudnn, "cudnn"},
                                                          {Attention::unfused, "unfused"}}};
inline std::optional<Attention> attention_named(const std::string& name) { return parse_name(kAttentionNames, name); }

// How the element-wise kernels between GEMMs run (work/pointwise_traffic.hpp): fused (Megatron
// with Transformer Engine or Apex, torch.compile) or eager (one kernel per PyTorch operator).
enum class Kernels { fused, eager };
inline constexpr EnumNames<Kernels, 2> kKernelsNames{{{Kernels::fused, "fused"}, {Kernels::eager, "eager"}}};
const char* to_string(Kernels k);

struct MemoryOptions {
  Precision precision = Precision::bf16;
  Sharding sharding = Sharding::none;
  bool distributed_optimizer = false;  // Megatron's: optimizer state sharded over DP
  // Megatron's --overlap-param-gather (with the distributed optimizer): the updated parameters'
  // all-gathers run under the next step's forward instead of after the optimizer.
  bool overlap_param_gather = false;
  // Gradients reduced over DP in bf16 instead of fp32 (Megatron's --grad-reduce-in-bf16; NeMo's
  // distributed_fused_adam with grad_sync_dtype=bf16). Not for FSDP/ZeRO-3 (their own dtype).
  bool grad_reduce_bf16 = false;
  // The loss over the vocabulary in one fused kernel (Transformer Engine's cross-entropy,
  // Megatron's --cross-entropy-loss-fusion) rather than one PyTorch kernel per step.
  bool cross_entropy_fusion = false;
  // The share of the tokens the output head and the loss run on: 1 for a language model; BERT
  // pre-training in NVIDIA's code gathers the masked positions (15%) before its masked-LM head.
  double head_token_fraction = 1.0;
  Recompute recompute = Recompute::none;
  Attention attention = Attention::flash;    // FlashAttention does not store the scores
  Kernels kernels = Kernels::fused;          // element-wise kernels fused, or one per operator
  long micro_batch = 1;                      // sequences per micro-batch
  long micro_batches = 1;                    // per step and pipeline (global batch / (micro batch x DP))
  long gpus_per_node = 8;                    // FSDP hybrid shards inside a node
  double bucket_bytes = 25.0 * 1024 * 1024;  // DDP's gradient bucket
  // NCCL's channels per communicator whose buffers a rank holds (nccl_buffers.hpp).
  int nccl_channels = kNcclMaxChannels;
  double fragmentation = 0.10;  // allocator allowance, a fraction of the rest (an assumption)
  // DeepSeek's DualPipe (DeepSeek-V3 report, arXiv:2412.19437, Section 3.2.1 and Table 2): rank i
  // holds stage i and stage PP-1-i, one for each direction the micro-batches flow, so "2x"
  // parameters, and PP+1 micro-batches' activations in flight against 1F1B's PP.
  bool dualpipe = false;
};

struct MemoryBreakdown {
  double weights = 0;         // bytes on the busiest GPU
  double gradients = 0;       // in the training precision (fp16 in Megatron, ZeRO's 16-bit gradients)
  double main_gradients = 0;  // fp32 main gradients (Megatron's main_grad buffer with bf16)
  double optimizer = 0;       // fp32 master weights and Adam's moments (and fp16's fp32 gradient copy)
  double activations = 0;
  double buffers = 0;  // communication: NCCL's buffers plus the framework's gradient buckets
  double nccl_buffers = 0;
  double fragmentation = 0;
  double total = 0;
  long stage = 0;              // the pipeline stage that needs the most
  double bytes_per_param = 0;  // weights + gradients + optimizer, per parameter held
  std::vector<std::string> assumptions;
};

// `layout` must divide the model (checked by the caller that parses it).
MemoryBreakdown training_memory(const ModelSpec& m, const ParallelLayout& layout, const MemoryOptions& o);

// Bytes of one transformer layer's activations for one micro-batch on one GPU (Korthikanti et
// al. 2022, "Reducing Activation Recomputation in Large Transformer Models", Section 4,
// generalised to GQA, gated FFNs and MoE).
double layer_activation_bytes(const ModelSpec& m, const ParallelLayout& layout, const MemoryOptions& o, bool moe_layer);

}  // namespace gf::work
