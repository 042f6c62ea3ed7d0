#pragma once
// Megatron-LM's pipeline schedules as a task graph on the flow engine: every stage runs its
// forward and backward micro-batches in the order Megatron runs them (1F1B; the interleaved
// 1F1B with several model chunks per stage), and every activation passed forward or gradient
// passed back between stages is a transfer in the same graph.
//
// Megatron's point-to-point calls are batched send/receive pairs that the caller waits on
// (p2p_communication.py: `send_forward_recv_backward`, `send_backward_recv_forward`, ...), so
// a transfer here starts when the sender has produced its data and the receiver has reached
// the call that posts its receive (the end of the op before the one that consumes it), and
// both sides wait for it: the receiver before the op that consumes it, the sender before its
// next op. The fill and drain (the bubble) and whatever the transfers add to the critical path
// come out of the graph rather than out of a formula; `pipeline_closed_form` is the formula the
// planner uses, and tests hold the two together.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "sim/task_graph.hpp"
#include "work/ddp_step.hpp"

namespace gf::work {

struct PipelineShape {
  long stages = 1;         // pipeline-parallel size
  long chunks = 1;         // model chunks per stage (virtual stages); 1: plain 1F1B
  long micro_batches = 1;  // per step
  // Megatron's --overlap-p2p-communication (the interleaved schedule only): sends and receives
  // are posted ahead and waited for only by the op that needs the data; the sender goes on.
  bool overlap = false;
  // DeepSeek's DualPipe (arXiv:2412.19437, Section 3.2.1, Table 2): micro-batches fed from both
  // ends, each forward chunk merged with a backward chunk so that the sends hide under compute.
  // Its bubble is (PP/2 - 1) x (F&B + B - 3W): F&B a merged forward-and-backward (F + B once the
  // communication hides), W the weight-gradient half of the backward (the backward runs each GEMM
  // twice, for the inputs and for the weights, so W = B / 2). The closed form only.
  bool dualpipe = false;
};

struct PipelineOp {
  bool forward = true;
  long micro_batch = 0;
  long chunk = 0;
};

// The ops `stage` runs in one step, in Megatron's order (schedules.py,
// forward_backward_pipelining_without_interleaving and _with_interleaving): warm-up forwards,
// then one forward and one backward in turn, then the remaining backwards. With chunks, the
// virtual micro-batches go round the chunks a group of `stages` micro-batches at a time, and
// the warm-up is (stages - stage - 1) x 2 + (chunks - 1) x stages; when the micro-batches
// equal the stages every forward comes first, as Megatron does.
std::vector<PipelineOp> stage_order(const PipelineShape& shape, long stage);
// How many forwards `stage` runs before its first backward.
long warmup_forwards(const PipelineShape& shape, long stage);

// One transfer placed in the graph: its first task (make it depend on what it waits for) and
// its last (what waits for it depends on that).
struct PlacedTransfer {
  sim::TaskId entry = 0;
  sim::TaskId exit = 0;
};
// Adds the transfer of one micro-batch's activations (forward) or their gradients (backward)
// from the GPUs of stage `from` to those of stage `to`.
using AddTransfer = std::function<PlacedTransfer(sim::TaskGraph&, long from, long to, bool forward)>;
// Transfers that each take `seconds` and use no link (the closed form's view of a send).
AddTransfer fixed_transfers(double seconds);

struct PipelineGraph {
  PipelineShape shape;
  sim::TaskGraph graph;
  std::vector<std::vector<PipelineOp>> order;     // per stage
  std::vector<std::vector<sim::TaskId>> compute;  // per stage, its ops' tasks in `order`
  struct Transfer {
    PlacedTransfer placed;
    long from = 0;  // stages
    long to = 0;
    bool forward = true;  // activations (else their gradients)
  };
  std::vector<Transfer> transfers;
};

// The step's pipeline part: every stage's ops taking `forward_s` and `backward_s` per
// micro-batch per model chunk (compute, in-line collectives included), joined by `add`'s
// transfers. One GPU's compute per stage stands for its tensor- and data-parallel peers.
PipelineGraph build_pipeline(const PipelineShape& shape, double forward_s, double backward_s, const AddTransfer& add);

struct PipelineTiming {
  double makespan_s = 0;
  double compute_s = 0;           // one stage's ops end to end: micro-batches x chunks x (forward + backward)
  std::vector<StepEvent> events;  // when asked: one track per stage, forwards and backwards
};

// Runs the graph on the flow engine with these link capacities (those of the communicators the
// transfers were priced on).
PipelineTiming run_pipeline(const PipelineGraph& g, std::span<const double> capacity, bool record);

// The same with each transfer a fixed time (`transfer_s`, one boundary's send as the
// communication layer prices it): the planner's path. Beyond the micro-batches' own compute
// (micro-batches x chunks x (forward + backward)) the step pays the fill and drain, (stages - 1)
// x (forward + backward) of one chunk (Narayanan et al., SC'21, Section 2.2), and the transfers
// on the critical path: for 1F1B two per micro-batch plus 2 x stages - 5 (with two stages,
// micro-batches + 1); for the interleaved schedule one per forward-backward pair plus
// (chunks + 1) x (stages - 1) + chunks - 2 (when the micro-batches equal the stages,
// 2 x (chunks + 1) x stages - 4); with overlapped sends, 2 x chunks x stages - 2 (the first
// micro-batch's way through every virtual stage and back) while a send takes no longer than a
// chunk's forward, and the graph itself beyond. Those counts are the graph's own: with uniform
// stages and fixed transfer times the closed form equals the graph exactly (tested).
struct PipelineCost {
  double bubble_s = 0;     // fill and drain
  double transfers_s = 0;  // sends and receives the stage waits for
};
PipelineCost pipeline_closed_form(const PipelineShape& shape, double forward_s, double backward_s, double transfer_s);

}  // namespace gf::work
