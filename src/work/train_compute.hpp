#pragma once
// Training step, compute: what the GPU's own work costs. The rates its kernels run at (the
// published GEMM ceiling or a measured one, and the per-kernel launch costs), one transformer
// layer of each kind for one micro-batch, the output head and the embedding, and the optimizer.
#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "work/layer_cost.hpp"
#include "work/model_spec.hpp"
#include "work/parallel_layout.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct ComputeRatesRequest {
  const hw::GpuSpec& gpu;
  Precision precision = Precision::bf16;
  double gemm_tflops = 0;          // a measured GEMM rate, TFLOP/s; 0: the published ceiling
  const std::string& gemm_source;  // where the measured rate came from (for the assumptions)
};

struct ComputeRates {
  ComputeContext context;  // resolved (resolve_rates), with the training step's kernel launches
  std::vector<std::string> assumptions;
};

// Refuses a measured rate above the GPU's peak (5% allowed for clock boost).
ComputeRates compute_rates(const ComputeRatesRequest& r);

struct TransformerCostsRequest {
  const ModelSpec& model;
  const ParallelLayout& layout;
  const MemoryOptions& memory;  // the step's (MemoryFit::options)
  const ComputeContext& context;
};

// One GPU's compute for one micro-batch, without any collective.
struct TransformerCosts {
  double tokens = 0;            // tokens one GPU holds: the micro-batch's sequences / CP
  TransformerLayerCost dense;   // a dense layer
  TransformerLayerCost expert;  // an MoE layer (a dense model: the dense layer's)
  double head_forward_s = 0;    // the output projection's GEMM and the loss over its logits
  double head_backward_s = 0;
  double embedding_s = 0;  // the embedding lookup (memory work), forward only
};

TransformerCosts transformer_costs(const TransformerCostsRequest& r);

// Adam streams weights, gradients and its states through HBM (about 30 bytes per parameter
// held, read and written), sharded as the optimizer states are. `params`: those the GPU holds.
double optimizer_seconds(const ComputeContext& c, const MemoryOptions& memory, const ParallelLayout& l, double params);

}  // namespace gf::work
