#pragma once
// Training step, data-parallel communication: the gradient reduction over every data-parallel
// group (joined with its context-parallel peers) overlapping the backward pass, with the groups
// on the same nodes sharing NICs and links (and another job's traffic, when there is one). DDP's
// buckets all-reduced; a sharded optimizer's (Megatron's distributed optimizer, ZeRO-1/2, FSDP
// SHARD_GRAD_OP) reduce-scattered with a parameter all-gather after; ZeRO-3 and FSDP full or
// hybrid sharding as per-layer gathers and reduce-scatters (fsdp_step.hpp).
#include <string>
#include <vector>

#include "work/ddp_step.hpp"
#include "work/train_step.hpp"
#include "work/training_context.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct DataParallelRequest {
  const TrainOptions& options;                // layout, rank order, placement, full_graph, record_timeline
  const MemoryOptions& memory;                // the step's: sharding, optimizer, reduction type, bucket size
  const std::vector<LayerCost>& layers;       // the representative stage's, forward order
  long micro_batches = 1;                     // per step (only the last reduces, but FSDP's every one)
  double optimizer_s = 0;                     // the optimizer's step after the reduction (seconds)
  double params = 0;                          // parameters the GPU holds (what a sharded optimizer gathers)
  const BackgroundJob* background = nullptr;  // another job's traffic beside it; null: none
};

struct DataParallelStep {
  // The representative stage's step: compute, the reduction's own time and what of it shows
  // (DdpStep::exposed_s), the SMs NCCL's kernels take, and the timeline when recorded.
  DdpStep step;
  bool reduce_scatter = false;  // gradients reduce-scattered (sharded), else all-reduced
  std::vector<std::string> assumptions;
};

// Without data or context parallelism the step is the stage's layers back to back and the
// optimizer.
DataParallelStep data_parallel_step(TrainingContext& cache, const DataParallelRequest& r);

}  // namespace gf::work
