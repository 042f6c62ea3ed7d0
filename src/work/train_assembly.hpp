#pragma once
// Training step, assembly: the phases' results put together into the step a user reads. The
// step's time (the stage's own step, the pipeline's bubble and sends, the wait for input), where
// it goes, the throughput and FLOP utilisation, the bottleneck in one sentence, the assumptions
// in the order the phases made them, and the representative GPU's timeline.
#include "topo/topology.hpp"
#include "work/model_spec.hpp"
#include "work/train_compute.hpp"
#include "work/train_data_parallel.hpp"
#include "work/train_groups.hpp"
#include "work/train_inline_comm.hpp"
#include "work/train_memory_fit.hpp"
#include "work/train_pipeline.hpp"
#include "work/train_placement.hpp"
#include "work/train_shape.hpp"
#include "work/train_stage.hpp"
#include "work/train_step.hpp"

namespace gf::work {

struct StepAssemblyRequest {
  const topo::Topology& topology;
  const ModelSpec& model;
  const TrainOptions& options;
  long gpus = 0;  // the job's
  const TrainShape& shape;
  const MemoryFit& memory;
  const ComputeRates& rates;
  const RankGroups& groups;
  const InlineComm& collectives;  // empty for a generic model
  const StageLayers& stage;
  double optimizer_s = 0;  // the optimizer's step on the representative GPU (seconds)
  const PlacedBackground& background;
  const DataParallelStep& data_parallel;
  const PipelineSchedule& pipeline;
};

// Adds the wait for input (TrainOptions::input) on top of the step the phases give.
TrainResult assemble_step(const StepAssemblyRequest& r);

}  // namespace gf::work
