#pragma once
// Training step, the pipeline: one micro-batch's activations sent across the slowest stage
// boundary with every peer's at once, and Megatron's 1F1B or interleaved schedule
// (pp_schedule.hpp), whose fill and drain and the sends in its critical path come on top of the
// representative stage's own step.
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "work/ddp_step.hpp"
#include "work/parallel_layout.hpp"
#include "work/training_context.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct PipelineSendRequest {
  const ParallelLayout& layout;
  const RankOrder& order;
  const std::vector<long>& placement;  // rank r on GPU placement[r]; empty: on GPU r
  double tokens = 0;                   // one micro-batch's tokens on one GPU (sequence / CP)
  long hidden = 0;                     // the model's hidden size
  Precision precision = Precision::bf16;
  const comm::Communicator* tp_group = nullptr;  // the representative TP group; null with TP 1
  const std::string& dtype;                      // the activations' type as nccl-tests names it
};

struct PipelineSend {
  double bytes = 0;     // what one GPU sends across a stage boundary per micro-batch
  double send_s = 0;    // that send with its peers' at once, and the TP all-gather after it
  double gather_s = 0;  // of which the all-gather (without sequence parallelism)
  const TrainingContext::PipelinePairs* boundaries = nullptr;  // the slowest boundary (the context's)
};

// Each TP rank sends its 1/TP of the activations: sequence parallelism leaves them split; without
// it Megatron splits them before the send and all-gathers them over the TP group after
// (Narayanan et al., SC'21, Section 4.1, "scatter/gather communication optimization", on by
// default). Every boundary passes every micro-batch, so the slowest one paces the pipeline: a
// boundary between servers when there is one, else the first. PP 2 or more.
PipelineSend price_pipeline_send(TrainingContext& cache, const PipelineSendRequest& r);

struct PipelineScheduleRequest {
  const ParallelLayout& layout;
  const RankOrder& order;
  const std::vector<long>& placement;
  const std::vector<LayerCost>& layers;  // the representative stage's, per micro-batch
  long micro_batches = 1;                // per step
  bool dualpipe = false;                 // DeepSeek's DualPipe (the closed form only)
  const PipelineSend& send;              // none without a pipeline
  const std::string& dtype;
  // The reference: the schedule on the flow engine, every peer's send as flows (slow).
  bool full_graph = false;
  bool record = false;  // fill `events`
};

struct PipelineSchedule {
  double bubble_s = 0;            // the pipeline filling and draining (seconds)
  double p2p_s = 0;               // the sends the representative stage waits for (seconds)
  std::vector<StepEvent> events;  // when recorded with PP 2 or more: every stage's ops and sends
  std::vector<std::string> assumptions;
};

PipelineSchedule pipeline_schedule(TrainingContext& cache, const PipelineScheduleRequest& r);

}  // namespace gf::work
