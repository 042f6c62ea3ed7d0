#pragma once
// What one iteration of a serving engine costs on one replica: a batch of prefill chunks and
// decode tokens through every layer, each GEMM a roofline of its FLOPs against the GPU's peak for
// the precision and of its bytes (weights at their stored precision, activations) against HBM,
// attention over the KV cache (FlashAttention for prefill chunks, KV reads for decode), and the
// tensor-parallel all-reduces and expert all-to-alls priced by the communication layer on the
// replica's real GPUs.
//
// Pipeline parallel replicas run as vLLM runs them: PP batches in flight, one per stage, each
// passing through every stage in turn. One batch's iteration then takes the whole model's time
// (every stage, plus the stage-to-stage sends), and the replica holds PP such batches at once
// (serving_sim.hpp runs them as PP schedulers sharing the KV cache equally).
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "work/compute_efficiency.hpp"
#include "work/model_spec.hpp"
#include "work/token_table.hpp"
#include "work/training_context.hpp"

namespace gf::work {

// How weights (and the KV cache) are stored: the bytes per value and the tensor-core rate the
// GEMMs run at.
enum class WeightFormat { fp16, bf16, fp8, fp4, int4 };
inline constexpr EnumNames<WeightFormat, 5> kWeightFormatNames{{{WeightFormat::fp16, "fp16"},
                                                                {WeightFormat::bf16, "bf16"},
                                                                {WeightFormat::fp8, "fp8"},
                                                                {WeightFormat::fp4, "fp4"},
                                                                {WeightFormat::int4, "int4"}}};
const char* to_string(WeightFormat f);
// Parses a name of kWeightFormatNames into `out`; false (and `out` untouched) otherwise.
bool parse_weight_format(const std::string& s, WeightFormat& out);
// Bytes per stored weight, scales included: NVFP4 stores one fp8 scale per 16 values, int4 (AWQ,
// GPTQ) one fp16 scale per group of 128.
double weight_bytes(WeightFormat f);

struct ReplicaSpec {
  long tp = 1;
  long pp = 1;
  long ep = 1;  // expert parallel inside the TP group (experts split over EP ranks)
  WeightFormat weights = WeightFormat::bf16;
  WeightFormat kv = WeightFormat::bf16;  // bf16, fp16 or fp8
  double gpu_memory_utilization = 0.9;
  // When > 0, the KV cache takes this fraction of the memory left after weights and activations
  // (TensorRT-LLM's kv_cache_free_gpu_mem_fraction) instead of filling gpu_memory_utilization.
  double kv_free_fraction = 0;
  long max_batch_tokens = 8192;  // the engine's activation workspace is sized for this many tokens
  // A MIG instance instead of a whole GPU (empty: whole GPUs): its share of the SMs and of the
  // memory bandwidth, and its memory. TP and PP stay 1 (NCCL does not span MIG instances).
  std::string mig;
  long max_seqs = 256;
  [[nodiscard]] long gpus() const { return tp * pp; }
  // Replicas one GPU holds: its MIG instances of the profile, else 1.
  long per_gpu = 1;
};

// One iteration's work on a replica (one pipeline batch when PP > 1).
struct IterationWork {
  long prefill_tokens = 0;       // prompt tokens processed (chunks of several requests)
  double prefill_attention = 0;  // sum over prefill tokens of the keys each attends to
  long prefill_sequences = 0;    // requests whose last prompt chunk is in this batch (they emit a token)
  long decode_sequences = 0;     // one new token each
  double decode_context = 0;     // sum of the decode requests' context lengths (KV tokens read)
};

// Where an iteration's time goes. compute + memory + communication = seconds.
struct IterationTime {
  double seconds = 0;
  double compute = 0;        // kernels limited by FLOPs (GEMMs, prefill attention)
  double memory = 0;         // kernels limited by HBM bytes (weights, KV cache, activations)
  double communication = 0;  // TP all-reduces, expert all-to-alls, pipeline sends
};

class InferenceCost {
public:
  // `gpus`: the replica's GPUs (global indices), stage after stage, each stage's TP group
  // together. Throws InputError when the layout cannot run the model (TP not dividing the heads,
  // a format the GPU lacks, weights that do not fit).
  InferenceCost(TrainingContext& context, const ModelSpec& m, const ReplicaSpec& r, std::vector<long> gpus);

  [[nodiscard]] IterationTime iteration(const IterationWork& w);

  [[nodiscard]] const ReplicaSpec& replica() const { return r_; }
  [[nodiscard]] const ModelSpec& model() const { return m_; }
  [[nodiscard]] const std::vector<long>& gpus() const { return gpus_; }
  // Memory per GPU: weights, KV cache capacity, activation workspace.
  [[nodiscard]] double weight_bytes_per_gpu() const { return weights_per_gpu_; }
  [[nodiscard]] double activation_bytes_per_gpu() const { return activations_; }
  [[nodiscard]] double kv_capacity_bytes_per_gpu() const { return kv_capacity_; }
  // KV cache bytes a token takes on each GPU (its stage's layers, its TP share of the heads).
  [[nodiscard]] double kv_bytes_per_token_per_gpu() const { return kv_per_token_; }
  // Tokens of context the whole replica holds.
  [[nodiscard]] long kv_capacity_tokens() const { return kv_tokens_; }
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] const std::vector<std::string>& assumptions() const { return assumptions_; }

private:
  TrainingContext& cache_;
  ModelSpec m_;
  ReplicaSpec r_;
  std::vector<long> gpus_;
  const hw::GpuSpec& gpu_;
  double peak_ = 0;  // FLOP/s of the GEMMs at the weights' format
  double peak_16_ = 0;
  double ceiling_ = 0.8;
  double fixed_ = 0;
  int sms_ = 0;     // streaming multiprocessors (0: unknown, no wave quantization)
  double hbm_ = 0;  // bytes/s memory-bound kernels reach
  double weights_per_gpu_ = 0;
  double activations_ = 0;
  double kv_per_token_ = 0;
  double kv_capacity_ = 0;
  long kv_tokens_ = 0;
  long stage_layers_ = 0;        // layers on the busiest stage
  double attention_params_ = 0;  // one layer's attention weights (MLA: its projections)
  // Collective times on a geometric grid of token counts (interpolated between points):
  // the engine meets every batch size from 1 to max_batch_tokens.
  TokenTable allreduce_;
  TokenTable alltoall_;
  TokenTable sendrecv_;
  // FlashAttention efficiency by log2 of the keys attended (cached lookups).
  std::vector<double> attention_eff_;
  std::vector<std::string> assumptions_;

  [[nodiscard]] double attention_efficiency(double keys) const;
};

}  // namespace gf::work
