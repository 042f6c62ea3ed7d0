#include "work/train_stage.hpp"

#include <fmt/format.h>

#include "work/kernel_launch.hpp"

namespace gf::work {

namespace {

// One kind of layer (dense or MoE) in the step, for one micro-batch.
struct LayerKind {
  LayerCost layer;
  double tp_s = 0, cp_s = 0, ep_s = 0, params = 0;
  double passes_s = 0, launch_s = 0, host_wait_s = 0;  // the layer's own passes; what launches add
};

LayerKind layer_kind(const TransformerLayerCost& c, const LayerCollectives& x) {
  const double tp_s = x.tp_s;
  const double cp_f = x.cp_forward_s;
  const double cp_b = x.cp_backward_s;
  LayerKind b;
  b.layer = {"",
             c.attention_forward + c.ffn_forward + 2 * tp_s + cp_f + x.ep.forward_s,
             c.attention_backward + c.ffn_backward + 2 * tp_s + cp_b + x.ep.backward_s,
             c.gradient_bytes,
             2 * tp_s + cp_f + x.ep.forward_s,
             2 * tp_s + cp_b + x.ep.backward_s};
  b.tp_s = 4 * tp_s;
  b.cp_s = cp_f + cp_b;
  b.ep_s = x.ep.forward_s + x.ep.backward_s;
  b.params = c.gradient_bytes / 4;
  b.passes_s = c.attention_forward + c.ffn_forward + c.attention_backward + c.ffn_backward;
  b.launch_s = c.launch_s;
  b.host_wait_s = c.host_wait_s;
  return b;
}

// The stage with the most work (the first of equals): its layers, the embedding on the first
// stage and the output projection and loss on the last.
long slowest_stage(const StageRequest& r, const std::vector<std::vector<long>>& by_stage, const LayerKind& dense,
                   const LayerKind& expert) {
  const ModelSpec& m = r.model;
  const long pp = r.layout.pp;
  const double head_cost = r.costs.head_forward_s + r.costs.head_backward_s;
  long slowest = 0;
  double slowest_s = -1;
  for (long st = 0; st < pp; ++st) {
    double cost = (st == 0 ? r.costs.embedding_s : 0.0) + (st == pp - 1 ? head_cost : 0.0);
    for (const long i : by_stage[static_cast<std::size_t>(st)]) {
      const auto& b = m.moe && i >= m.moe->dense_layers ? expert.layer : dense.layer;
      cost += b.forward_s + b.backward_s;
    }
    if (cost > slowest_s) {
      slowest_s = cost;
      slowest = st;
    }
  }
  return slowest;
}

// What kernel launches cost a layer (kernel_launch.hpp), said where it is worth saying.
void note_launches(const LayerKind& dense, Kernels kernels, std::vector<std::string>& assumptions) {
  if (dense.passes_s > 0 && dense.launch_s > 0.01 * dense.passes_s)
    assumptions.push_back(fmt::format(
        "kernel launches add {:.0f}% to a layer's forward and backward ({:.0f}% of it the GPU waiting for the host "
        "to enqueue {} kernels at {:.1f} us each): data/compute/kernel_launch.yaml",
        100 * dense.launch_s / (dense.passes_s - dense.launch_s), 100 * dense.host_wait_s / dense.launch_s,
        to_string(kernels), 1e6 * KernelLaunch::builtin().host_interval_s()));
}

// How the stages split the layers and how the MoE all-to-alls overlap, where either is not the plain case.
void note_split_and_overlap(const StageRequest& r, long slowest, std::vector<std::string>& assumptions) {
  const ParallelLayout& l = r.layout;
  const PipelineSplit& split = r.shape.split;
  if (l.pp > 1 && (split.most_layers() * l.pp != r.model.layers || split.vpp > 1))
    assumptions.push_back(
        fmt::format("pipeline stages hold {} layers (stage {} is the slowest and paces the "
                    "pipeline{})",
                    stage_summary(split), slowest, l.split.layout.empty() ? "" : ", layout " + l.split.layout));
  const MoeOverlap overlap = r.shape.moe_overlap;
  if (overlap != MoeOverlap::none)
    assumptions.push_back(fmt::format(
        "MoE all-to-alls overlapped ({}){}; hidden all-to-alls hold {:.0f}% of the SMs", to_string(overlap),
        overlap == MoeOverlap::ep_a2a ? fmt::format(": {:.0f}% of the micro-batches run merged with another's backward",
                                                    100 * r.collectives.paired)
        : overlap == MoeOverlap::dualpipe ? ": every forward chunk merged with a backward chunk (DualPipe)"
                                          : ": the shared experts run beside dispatch and combine",
        100 * r.collectives.a2a_sm_share));
}

}  // namespace

StageLayers representative_stage(const StageRequest& r) {
  const ModelSpec& m = r.model;
  const ParallelLayout& l = r.layout;
  const LayerKind dense = layer_kind(r.costs.dense, r.collectives.dense);
  const LayerKind expert = m.moe ? layer_kind(r.costs.expert, r.collectives.expert) : dense;
  StageLayers out;
  note_launches(dense, r.kernels, out.assumptions);
  const auto by_stage = r.shape.split.layers_by_stage();
  out.stage = slowest_stage(r, by_stage, dense, expert);
  const double mbs = static_cast<double>(r.shape.micro_batches);
  for (const long i : by_stage[static_cast<std::size_t>(out.stage)]) {
    const LayerKind& b = m.moe && i >= m.moe->dense_layers ? expert : dense;
    out.layers.push_back(b.layer);
    out.layers.back().name = fmt::format("layer {}", i);
    out.tp_s += b.tp_s * mbs;
    out.cp_s += b.cp_s * mbs;
    out.ep_s += b.ep_s * mbs;
    out.params += b.params;
  }
  note_split_and_overlap(r, out.stage, out.assumptions);
  const double vocab_params = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / static_cast<double>(l.tp);
  if (l.pp == 1 || (l.pp > 1 && out.stage == l.pp - 1)) {
    out.layers.push_back(
        {"output", r.costs.head_forward_s, r.costs.head_backward_s, vocab_params * (m.tied_embeddings ? 0 : 4)});
    out.params += vocab_params;
  }
  if (l.pp == 1 || out.stage == 0) {
    out.layers.insert(out.layers.begin(), LayerCost{"embedding", r.costs.embedding_s, 0, vocab_params * 4});
    out.params += vocab_params;
  }
  return out;
}

StageLayers generic_stage(const GenericStageRequest& r) {
  const ModelSpec& m = r.model;
  const ComputeContext& ctx = r.context;
  // Beside the FLOPs, the memory-bound kernels between them (normalisation, activation
  // functions). Where the model file counts the bytes its step's kernels move through HBM, those,
  // two fifths in the forward pass; else every activation byte the step keeps is written and read
  // in the forward pass, and read, with its gradient written and read, in the backward pass (a
  // floor). The file's bytes are 16-bit ones; fp32 doubles them.
  const double flops = m.flops_per_sample * static_cast<double>(r.micro_batch);
  const double width = r.precision == Precision::fp32 ? 2 : 1;
  const double traffic =
      (m.step_hbm_bytes_per_sample > 0 ? m.step_hbm_bytes_per_sample : 5 * m.activation_bytes_per_sample) *
      static_cast<double>(r.micro_batch) * width;
  const double fwd = flops / (ctx.peak * ctx.ceiling) + memory_seconds(ctx, 0.4 * traffic);
  const double bwd = 2 * flops / (ctx.peak * ctx.ceiling) + memory_seconds(ctx, 0.6 * traffic);
  StageLayers out;
  // Gradients appear through the backward pass: spread them over ten equal blocks.
  for (int i = 0; i < 10; ++i)
    out.layers.push_back({fmt::format("block {}", i), fwd / 10, bwd / 10, m.params * 4 / 10});
  out.params = m.params;
  out.assumptions.push_back(
      m.step_hbm_bytes_per_sample > 0
          ? "a generic model's FLOPs run at its GPU's GEMM ceiling and its kernels move the model file's HBM bytes "
            "per sample, in ten equal blocks"
          : "a generic model's FLOPs run at its GPU's GEMM ceiling and its activations cross HBM five times a step, "
            "in ten equal blocks");
  return out;
}

}  // namespace gf::work
