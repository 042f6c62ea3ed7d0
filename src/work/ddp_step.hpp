#pragma once
// One data-parallel training step as PyTorch DDP runs it, on the flow engine: forward and
// backward layer by layer on a GPU's compute, gradients gathered into buckets (25 MiB by
// default, the first one 1 MiB) in the order backward produces them, and each bucket's
// all-reduce launched on the data-parallel communicator as soon as its last gradient is ready,
// one after another on NCCL's stream, overlapping the rest of the backward pass. The step ends
// with the optimizer after the last all-reduce.
//
// The GPUs of a data-parallel group are symmetric, so one GPU's compute stands for all; the
// all-reduces are the communication layer's collectives with every rank's flows, placed in the
// same graph (comm::add_collective).
#include <functional>
#include <string>
#include <vector>

#include "comm/collective_tasks.hpp"

namespace gf::work {

// What one layer (or block of parameters) costs on one GPU for one micro-batch.
struct LayerCost {
  std::string name;
  double forward_s = 0;
  double backward_s = 0;
  double gradient_bytes = 0;  // the layer's gradients as DDP reduces them
  // The parts of forward_s and backward_s that are collectives in the critical path (tensor-
  // parallel all-reduces, expert all-to-alls, ring attention's exposed exchange): the compute
  // stream waits for them. Used to draw the timeline.
  double forward_inline_s = 0;
  double backward_inline_s = 0;
};

// One span of the step's timeline on one track (a GPU stream or a collective's group), for
// Chrome/Perfetto traces.
struct StepEvent {
  std::string track;
  std::string name;
  double start_s = 0;
  double duration_s = 0;
};

struct DdpOptions {
  double bucket_bytes = 25.0 * 1024 * 1024;       // bucket_cap_mb
  double first_bucket_bytes = 1.0 * 1024 * 1024;  // DDP's _DEFAULT_FIRST_BUCKET_BYTES
  long accumulation = 1;                          // micro-batches per step; only the last reduces
  double optimizer_s = 0;
  std::string dtype = "float";  // the gradients' type as nccl-tests names it (float, bfloat16)
  // Sharded optimizer states (Megatron's distributed optimizer, ZeRO-1/2): buckets are
  // reduce-scattered, and after the optimizer each rank all-gathers the updated parameters
  // (`gather_bytes` in all, in buckets of the same size).
  bool reduce_scatter = false;
  double gather_bytes = 0;
  // Megatron's --overlap-param-gather: the all-gathers run at the start of the next step instead,
  // bucket by bucket in forward order, and the first micro-batch's forward of each layer waits
  // only for the bucket that holds it.
  bool overlap_param_gather = false;
  bool record = false;  // fill DdpStep::events (the closed form only)
  // The share of the GPU's SMs NCCL's kernel holds while it runs (one CTA per channel): compute
  // that overlaps it runs that much slower (the closed form only).
  double sm_share = 0;
};

struct DdpBucket {
  double bytes = 0;
  double start_s = 0;  // when its all-reduce started, from the step's start
  double end_s = 0;
  double alone_s = 0;  // the all-reduce on its own (the communication layer's time)
};

struct DdpStep {
  double step_s = 0;
  double compute_s = 0;        // forward + backward + optimizer, end to end on the GPU
  double communication_s = 0;  // the all-reduces' own times, added up
  double exposed_s = 0;        // what the step waits for communication beyond compute
  double sm_contention_s = 0;  // compute lost to the SMs NCCL's overlapping kernels hold
  std::vector<DdpBucket> buckets;
  std::vector<StepEvent> events;  // when asked for: the step's timeline
};

// Track names of the timeline.
inline constexpr const char* kComputeTrack = "compute stream";
inline constexpr const char* kInlineTrack = "in-line collectives (TP, EP, CP)";
inline constexpr const char* kGradientTrack = "NCCL stream: gradient reduction";
inline constexpr const char* kGatherTrack = "NCCL stream: parameter all-gather";

// The compute stream of `micro` micro-batches through `layers` from `start`, with each layer's
// in-line collectives after its compute; returns when the last backward layer ends and, for the
// last micro-batch, when each layer's gradient is ready (backward order).
// `params_ready` (optional, one per layer in forward order): the first micro-batch's forward of a
// layer starts no earlier.
double run_layers(const std::vector<LayerCost>& layers, long micro, double start, std::vector<double>& ready,
                  std::vector<StepEvent>* events, const std::vector<double>* params_ready = nullptr);

// Layers in forward order. The communicator is the data-parallel group; one rank per GPU.
DdpStep ddp_step(const comm::Communicator& dp, const std::vector<LayerCost>& layers, const DdpOptions& o);
// Several data-parallel groups at once (one per tensor-parallel rank: they share the NICs and
// the fabric); the first group's GPU stands for every GPU's compute. All must live on one
// topology with the same NCCL parameters.
DdpStep ddp_step(const std::vector<const comm::Communicator*>& groups, const std::vector<LayerCost>& layers,
                 const DdpOptions& o);

// The same step in closed form, for callers that evaluate many layouts: kernels back to back
// on the compute stream, each bucket's collective launched once its last gradient is ready and
// the bucket before it is done. `time_of(op, bytes)` gives the communication layer's time for
// the group alone, and the time it takes beside the concurrent groups that share its links.
// Where the groups are symmetric and start together, this is what the flow graph above gives
// (a test holds the two within 2%).
struct CollectiveTimes {
  double alone = 0;
  double shared = 0;
};
using CollectiveTime = std::function<CollectiveTimes(comm::Op op, double bytes)>;
DdpStep ddp_schedule(const std::vector<LayerCost>& layers, const DdpOptions& o, const CollectiveTime& time_of);

}  // namespace gf::work
