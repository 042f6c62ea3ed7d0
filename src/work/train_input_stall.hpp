#pragma once
// Training step, the input: what the step waits for its data. Each data-parallel replica loads
// its own samples on the node of its first GPU (Megatron loads on TP rank 0 of the first stage
// and broadcasts); the busiest node's share is measured against the rate its input pipeline's
// loading stages (storage, decode, host-to-device copy) sustain together (pipeline.hpp). Loaders
// that prefetch beside the step show only what they cannot deliver in the step's time.
#include <string>
#include <vector>

#include "work/parallel_layout.hpp"
#include "work/pipeline.hpp"

namespace gf::work {

struct InputStallRequest {
  const PipelineResult& input;  // each node's input pipeline (model_pipeline)
  const std::string& name;      // the workload's name, for the assumption ("" : "pipeline")
  const ParallelLayout& layout;
  const RankOrder& order;
  const std::vector<long>& placement;  // rank r on GPU placement[r]; empty: on GPU r
  long gpus_per_node = 8;
  long global_batch = 0;  // samples per step
  double step_s = 0;      // the step without waiting for input (seconds)
};

struct InputStall {
  double stall_s = 0;  // the wait for data added to the step (seconds)
  std::vector<std::string> assumptions;
};

InputStall input_stall(const InputStallRequest& r);

}  // namespace gf::work
