#pragma once
// One training step of a model on a cluster under a parallel layout: compute from the
// published kernel efficiencies, tensor-parallel collectives in the critical path, and the
// data-parallel gradient reduction overlapping backward on the flow engine (every DP group at
// once, sharing the NICs and the fabric). Memory per GPU beside it.
//
// Modelled today: data parallelism (DDP buckets; Megatron's distributed optimizer and ZeRO-1/2
// as reduce-scatter plus a parameter all-gather; ZeRO-3 and FSDP full/hybrid as per-layer
// gathers and reduce-scatters, fsdp_step.hpp) with tensor and sequence parallelism, gradient
// accumulation, and pipeline parallelism with Megatron's 1F1B schedule (interleaved with --vpp;
// pp_schedule.hpp: the schedule's graph, and the closed form counting its critical sends that
// the planner uses); context parallelism as ring attention (key/value chunks passed around the CP
// group, overlapping the attention core; gradients reduced over DP x CP) and expert parallelism
// (dispatch and combine all-to-alls in the critical path). Impossible layouts throw InputError.
#include <optional>
#include <string>
#include <vector>

#include "topo/topology.hpp"
#include "work/ddp_step.hpp"
#include "work/memory_fit.hpp"
#include "work/model_spec.hpp"
#include "work/moe_overlap.hpp"
#include "work/parallel_layout.hpp"
#include "work/pipeline.hpp"
#include "work/training_context.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct TrainOptions {
  ParallelLayout layout;
  RankOrder order;
  MemoryOptions memory;
  long global_batch = 0;  // sequences (samples) per step; 0: micro batch x DP
  long gpus = 0;          // the job's GPUs: the first ones of the cluster, node by node; 0: all
  // Where the ranks run, when not on the first GPUs: rank r (numbered in `order`) on global GPU
  // placement[r], so that a scheduler's placement (spread over nodes and leaf switches) is
  // priced on the links it really uses. Empty: rank r on GPU r.
  std::vector<long> placement;
  // Simulate every data-parallel group's every bucket in one flow graph (slow: the reference
  // the closed-form schedule is tested against) instead of the closed form.
  bool full_graph = false;
  bool record_timeline = false;  // fill TrainResult::timeline (for --trace)
  // How the MoE all-to-alls overlap compute (moe_overlap.hpp); the default is Megatron-Core's.
  MoeOverlap moe_overlap = MoeOverlap::none;
  bool moe_overlap_given = false;  // asked for by the user (refused where there is nothing to overlap)
  // Another job on the GPUs this one leaves free (gpus < the cluster's), running this
  // collective of this size back to back: its traffic shares the NICs' uplinks and the fabric
  // with the data-parallel reductions. Unset when `background_bytes` is 0.
  // GEMMs at this measured rate (TFLOP/s, e.g. from `probe --save`) instead of the published
  // ceiling; 0: the published one. `gemm_source` says where it came from.
  double gemm_tflops = 0;
  std::string gemm_source;
  comm::Op background_op = comm::Op::all_reduce;
  double background_bytes = 0;
  // The input pipeline of each node (model_pipeline, pipeline.hpp), when given: the samples
  // its loading stages (storage, decode, host-to-device copy) deliver per second against those
  // the step consumes there. The loaders prefetch beside the step (unless the pipeline runs its
  // stages in turn); what they cannot deliver in a step's time is the data stall.
  std::optional<PipelineResult> input;
  std::string input_name;  // for the assumptions
};

struct StepBreakdown {
  double compute_s = 0;        // forward, backward and recomputation on the GPU
  double tp_s = 0;             // tensor-parallel collectives (in the critical path)
  double dp_exposed_s = 0;     // gradient reduction the step waits for beyond compute
  double pp_bubble_s = 0;      // the pipeline filling and draining (1F1B)
  double pp_p2p_s = 0;         // activations and their gradients between stages
  double cp_s = 0;             // ring attention's key/value exchange beyond the compute it overlaps
  double ep_s = 0;             // expert parallelism's dispatch and combine all-to-alls (critical path)
  double sm_contention_s = 0;  // compute slowed by the SMs overlapping NCCL kernels hold
  double optimizer_s = 0;
  double data_stall_s = 0;  // waiting for the input pipeline (TrainOptions::input)
};

struct TrainResult {
  double step_s = 0;
  double tokens_per_s = 0;
  double samples_per_s = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  long micro_batches = 0;
  long global_batch = 0;  // sequences per step
  long gpus = 0;
  StepBreakdown breakdown;
  double dp_communication_s = 0;  // the DP collectives' own time, added up
  MemoryBreakdown memory;
  bool fits = true;
  double gpu_memory = 0;               // bytes
  std::vector<FitOption> fit_options;  // when it does not fit: single changes that would make it
  std::string bottleneck;
  std::vector<std::string> assumptions;
  std::vector<StepEvent> timeline;  // one step of the representative GPU, when asked for
};

// One evaluation. The context's caches carry over to the next call on the same cluster (the
// planner's loop); the first form uses a fresh one.
TrainResult train_step(const topo::Topology& t, const ModelSpec& m, const TrainOptions& o);
TrainResult train_step(TrainingContext& context, const ModelSpec& m, const TrainOptions& o);

}  // namespace gf::work
