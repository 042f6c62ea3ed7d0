#pragma once
// Training step, the representative stage: the layers of the pipeline stage that paces the
// step (1F1B runs at the pace of its slowest stage), each with its compute and the collectives in
// its critical path, in forward order. A generic model (no layers to stage) is ten equal blocks.
#include <string>
#include <vector>

#include "work/ddp_step.hpp"
#include "work/model_spec.hpp"
#include "work/parallel_layout.hpp"
#include "work/train_compute.hpp"
#include "work/train_inline_comm.hpp"
#include "work/train_shape.hpp"

namespace gf::work {

struct StageLayers {
  // Per micro-batch, in forward order: compute plus in-line collectives (forward_s, backward_s),
  // and the gradient bytes data parallelism reduces.
  std::vector<LayerCost> layers;
  long stage = 0;     // the pipeline stage they are (0 without a pipeline)
  double params = 0;  // parameters this stage holds on one GPU
  // The step's in-line collectives on this stage, over all its micro-batches (seconds).
  double tp_s = 0;
  double cp_s = 0;
  double ep_s = 0;
  std::vector<std::string> assumptions;
};

struct StageRequest {
  const ModelSpec& model;
  const ParallelLayout& layout;
  const TrainShape& shape;  // the stages' layers, micro-batches and MoE overlap
  const TransformerCosts& costs;
  const InlineComm& collectives;
  Kernels kernels = Kernels::fused;  // named where launches cost a layer much
};

// The stage with the most work, with the embedding on the first stage and the output
// projection and loss on the last.
StageLayers representative_stage(const StageRequest& r);

struct GenericStageRequest {
  const ModelSpec& model;
  const ComputeContext& context;
  long micro_batch = 1;  // samples
  Precision precision = Precision::bf16;
};

// A generic model: its forward FLOPs per sample at the GEMM ceiling, backward twice that, and its
// memory-bound kernels beside them; gradients spread over ten equal blocks.
StageLayers generic_stage(const GenericStageRequest& r);

}  // namespace gf::work
