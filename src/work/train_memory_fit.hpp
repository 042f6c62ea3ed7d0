#pragma once
// Training step, memory: what one GPU holds under the layout (training_memory.hpp), whether that
// fits the GPU, and when it does not, the single changes that would make it fit (memory_fit.hpp).
#include <vector>

#include "hw/gpu.hpp"
#include "work/memory_fit.hpp"
#include "work/model_spec.hpp"
#include "work/parallel_layout.hpp"
#include "work/train_shape.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct MemoryFitRequest {
  const ModelSpec& model;
  const ParallelLayout& layout;
  const MemoryOptions& memory;  // as asked for; the step's micro-batches and node size are filled in
  const TrainShape& shape;
  const hw::GpuSpec& gpu;
  long gpus_per_node = 8;
};

struct MemoryFit {
  // The options the step runs with: the request's, with micro_batches, gpus_per_node and
  // dualpipe from the step's shape and cluster.
  MemoryOptions options;
  MemoryBreakdown breakdown;           // bytes on the busiest GPU
  double gpu_memory = 0;               // bytes the GPU has (as nvidia-smi reports it)
  bool fits = true;                    // breakdown.total <= gpu_memory
  std::vector<FitOption> fit_options;  // when it does not fit: single changes that would make it
};

MemoryFit fit_memory(const MemoryFitRequest& r);

}  // namespace gf::work
