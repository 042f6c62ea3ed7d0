#pragma once
// Every parallel layout of a training workload on one cluster: TP x PP x CP (x EP for MoE) x
// DP filling the GPUs, each micro-batch, recomputation and optimizer-sharding choice. Layouts
// that do not divide the model or the batch are skipped (counted as invalid), layouts that do
// not fit in GPU memory are pruned by the memory model before any timing (counted), and the rest
// are timed by the training-step model on the cluster's topology. The fastest is kept.
#include <optional>
#include <string>

#include "plan/plan_spec.hpp"
#include "work/train_step.hpp"
#include "work/training_context.hpp"

namespace gf::plan {

struct LayoutSearch {
  long layouts = 0;        // valid layouts evaluated: pruned for memory, or timed
  long invalid = 0;        // combinations rejected: not dividing the model, the GPUs or the batch
  long pruned_memory = 0;  // valid but over the GPU's memory
  long timed = 0;          // run through the step model
  std::optional<work::TrainOptions> best;
  work::TrainResult result;
  double smallest_memory = 0;  // bytes: the leanest valid layout's need (for "does not fit" answers)
};

// `gpus`: the job's GPUs (the cluster's first ones).
LayoutSearch search_layouts(work::TrainingContext& context, const TrainingWorkload& w, const SearchSpace& s, long gpus);

// "TP8 PP4 DP16 mb1 selective distopt" and the like.
std::string layout_label(const work::TrainOptions& o);

}  // namespace gf::plan
