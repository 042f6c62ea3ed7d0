#pragma once
// When a layout does not fit in a GPU's memory: by how much, and which one change of the
// options a Megatron or PyTorch user would reach for first makes it fit (recomputation,
// sequence parallelism, a sharded optimizer, a smaller micro-batch, more tensor or pipeline
// stages on the same GPUs), each with the memory it leaves per GPU.
#include <string>
#include <vector>

#include "work/model_spec.hpp"
#include "work/parallel_layout.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct FitOption {
  std::string change;  // as the command line spells it: "--recompute full", "--pp 8 --dp 2"
  double memory = 0;   // bytes per GPU with it
};

// The single changes that bring `memory` per GPU under `gpu_memory`, fewest bytes first.
// `global_batch` stays (gradient accumulation follows); layouts keep the GPU count and must
// divide the model and the batch as `train` requires.
std::vector<FitOption> fit_options(const ModelSpec& m, const ParallelLayout& layout, const MemoryOptions& memory,
                                   long global_batch, double gpu_memory);

}  // namespace gf::work
