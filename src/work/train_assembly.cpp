#include "work/train_assembly.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "work/model_size.hpp"
#include "work/train_input_stall.hpp"

namespace gf::work {

namespace {

// The representative stage's streams, after the pipeline's fill and before its drain (half the
// bubble each), then every stage's forwards, backwards and sends in the schedule's own order.
void add_timeline(const StepAssemblyRequest& r, TrainResult& out) {
  const DdpStep& s = r.data_parallel.step;
  const double fill = out.breakdown.pp_bubble_s / 2;
  for (auto e : s.events) {
    e.start_s += fill;
    out.timeline.push_back(std::move(e));
  }
  if (fill > 0) {
    out.timeline.push_back({kComputeTrack, "pipeline fill (idle)", 0, fill});
    out.timeline.push_back({kComputeTrack, "pipeline drain (idle)", fill + s.step_s, fill});
  }
  for (const auto& e : r.pipeline.events) out.timeline.push_back(e);
}

void add_input_stall(const StepAssemblyRequest& r, TrainResult& out) {
  const TrainOptions& o = r.options;
  const InputStall stall = input_stall({*o.input, o.input_name, o.layout, o.order, o.placement,
                                        r.topology.gpus_per_node(), out.global_batch, out.step_s});
  out.breakdown.data_stall_s = stall.stall_s;
  if (o.record_timeline && out.breakdown.data_stall_s > 0)
    out.timeline.push_back({kComputeTrack, "waiting for input (data stall)", out.step_s, out.breakdown.data_stall_s});
  out.step_s += out.breakdown.data_stall_s;
  out.assumptions.insert(out.assumptions.end(), stall.assumptions.begin(), stall.assumptions.end());
}

// Samples and tokens per second; model FLOPs (the standard 6N + attention per token,
// model_size.hpp) and hardware FLOPs (with the recomputation) per GPU against its peak.
void add_throughput(const StepAssemblyRequest& r, TrainResult& out) {
  const ModelSpec& m = r.model;
  const double samples = static_cast<double>(out.global_batch);
  out.samples_per_s = samples / out.step_s;
  out.tokens_per_s = m.is_transformer() ? out.samples_per_s * static_cast<double>(m.seq) : 0;
  const TokenFlops per_token = training_flops(m, r.options.memory.recompute);
  const double per_sample_model = m.is_transformer() ? per_token.model * static_cast<double>(m.seq) : per_token.model;
  const double per_sample_hw =
      m.is_transformer() ? per_token.hardware * static_cast<double>(m.seq) : per_token.hardware;
  out.model_tflops_per_gpu = per_sample_model * out.samples_per_s / static_cast<double>(r.gpus) / 1e12;
  out.hardware_tflops_per_gpu = per_sample_hw * out.samples_per_s / static_cast<double>(r.gpus) / 1e12;
  const double peak = peak_flops(r.rates.context) / 1e12;
  out.mfu = out.model_tflops_per_gpu / peak;
  out.hfu = out.hardware_tflops_per_gpu / peak;
}

// The bottleneck in one sentence: the largest share of the step, except that an input pipeline
// loading beside the step which still makes the GPUs wait sets the throughput by itself (the step
// is its load time), whatever share the wait is.
std::string bottleneck(const StepAssemblyRequest& r, const TrainResult& out) {
  const ParallelLayout& l = r.options.layout;
  const double step = out.step_s;
  const auto& b = out.breakdown;
  const bool input_sets_pace = r.options.input && r.options.input->overlapped && b.data_stall_s > 0.01 * step;
  if (input_sets_pace || b.data_stall_s >= std::max({b.compute_s, b.tp_s, b.ep_s, b.cp_s, b.dp_exposed_s}))
    return fmt::format("input pipeline: the GPUs wait {:.0f}% of the step for data", 100 * b.data_stall_s / step);
  if (b.dp_exposed_s >= std::max({b.compute_s, b.tp_s, b.ep_s, b.cp_s}))
    return fmt::format(
        "gradient synchronisation: {:.0f}% of the step waits for the data-parallel "
        "{} across {} GPUs",
        100 * b.dp_exposed_s / step, r.data_parallel.reduce_scatter ? "reduce-scatter" : "all-reduce", l.dp * l.cp);
  if (b.tp_s >= std::max({b.compute_s, b.ep_s, b.cp_s}))
    return fmt::format("tensor-parallel collectives: {:.0f}% of the step, TP {} over {}", 100 * b.tp_s / step, l.tp,
                       r.groups.tp == nullptr ? std::string("-") : r.groups.tp->transport_summary().front());
  if (b.ep_s >= std::max(b.compute_s, b.cp_s))
    return fmt::format("expert all-to-all: {:.0f}% of the step, EP {}", 100 * b.ep_s / step, l.ep);
  if (b.cp_s >= b.compute_s)
    return fmt::format("context-parallel exchange: {:.0f}% of the step beyond the attention it overlaps, CP {}",
                       100 * b.cp_s / step, l.cp);
  return fmt::format("compute: {:.0f}% of the step ({:.0f}% MFU); communication exposes {:.0f}%",
                     100 * b.compute_s / step, 100 * out.mfu,
                     100 * (b.tp_s + b.dp_exposed_s + b.ep_s + b.cp_s + b.pp_p2p_s) / step);
}

// What every step assumes: the efficiency file's assumptions (the attention fallback only where
// it applies), and how the TP collectives meet the compute.
void add_closing_assumptions(const StepAssemblyRequest& r, std::vector<std::string>& assumptions) {
  const ComputeEfficiency& eff = r.rates.context.efficiency;
  for (const auto& a : eff.assumptions())
    if (a.rfind("attention on GPUs without", 0) != 0 || !eff.has_attention_figures(r.topology.gpu_spec()))
      assumptions.push_back(a);
  const ParallelLayout& l = r.options.layout;
  const bool tp_overlap = r.collectives.tp_overlap;
  if (l.tp > 1 && (tp_overlap || !l.tp_comm_overlap))
    assumptions.push_back(
        tp_overlap ? "TP all-gathers and reduce-scatters run under the GEMM each feeds or drains as Transformer "
                     "Engine's userbuffers split them (ring exchange by copy engine; reduce-scatter in 4 chunks "
                     "on 16 SMs kept from the GEMM): the last chunk's scatter, what outlasts a chunk, and the "
                     "SMs and kernels the split costs are in the critical path"
                   : "TP collectives are timed alone, in the critical path (no overlap with compute)");
}

}  // namespace

TrainResult assemble_step(const StepAssemblyRequest& r) {
  TrainResult out;
  out.gpus = r.gpus;
  out.micro_batches = r.shape.micro_batches;
  out.global_batch = r.shape.global_batch;
  out.memory = r.memory.breakdown;
  out.gpu_memory = r.memory.gpu_memory;
  out.fits = r.memory.fits;
  out.fit_options = r.memory.fit_options;
  // The phases' assumptions in the order they were made.
  for (const auto* phase : {&r.rates.assumptions, &r.collectives.assumptions, &r.stage.assumptions,
                            &r.background.assumptions, &r.data_parallel.assumptions, &r.pipeline.assumptions})
    out.assumptions.insert(out.assumptions.end(), phase->begin(), phase->end());
  const DdpStep& s = r.data_parallel.step;
  auto& b = out.breakdown;
  b.tp_s = r.stage.tp_s;
  b.cp_s = r.stage.cp_s;
  b.ep_s = r.stage.ep_s;
  b.optimizer_s = r.optimizer_s;
  b.pp_bubble_s = r.pipeline.bubble_s;
  b.pp_p2p_s = r.pipeline.p2p_s;
  if (r.options.record_timeline) add_timeline(r, out);
  out.step_s = s.step_s + b.pp_bubble_s + b.pp_p2p_s;
  if (r.options.input) add_input_stall(r, out);
  b.compute_s = s.compute_s - b.optimizer_s - b.tp_s - b.cp_s - b.ep_s;
  b.dp_exposed_s = s.exposed_s;
  b.sm_contention_s = s.sm_contention_s;
  out.dp_communication_s = s.communication_s;
  add_throughput(r, out);
  out.bottleneck = bottleneck(r, out);
  add_closing_assumptions(r, out.assumptions);
  return out;
}

}  // namespace gf::work
