#pragma once
// Training step, the request checked: the layout against the job's GPUs and the model, the
// MoE overlap against the layout, and the batch split into micro-batches. What is impossible
// (or what Megatron-LM refuses) is an InputError naming the flag and what would do.
#include "work/model_spec.hpp"
#include "work/moe_overlap.hpp"
#include "work/pipeline_split.hpp"
#include "work/train_step.hpp"

namespace gf::work {

struct TrainShape {
  long micro_batch = 1;    // sequences (samples) per micro-batch
  long global_batch = 0;   // sequences per step
  long micro_batches = 0;  // per step on each data-parallel rank (gradient accumulation)
  // The MoE overlap in effect: none unless the model has experts and EP is 2 or more.
  MoeOverlap moe_overlap = MoeOverlap::none;
  PipelineSplit split;  // the layers each stage holds (one stage of nothing for a generic model)
};

// `gpus`: the job's GPUs (job_gpus, train_placement.hpp).
TrainShape check_train_shape(const ModelSpec& m, const TrainOptions& o, long gpus);

}  // namespace gf::work
