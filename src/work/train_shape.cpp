#include "work/train_shape.hpp"

#include <fmt/format.h>

#include "work/flag_refusal.hpp"

namespace gf::work {

namespace {

// The layout's size against the job's GPUs, and its axes against what the model has.
void check_axes(const ModelSpec& m, const TrainOptions& o, long gpus) {
  const ParallelLayout& l = o.layout;
  refuse_if(l.gpus() != gpus, "--dp",
            fmt::format("TP {} x PP {} x DP {} x CP {} = {} GPUs, but the cluster has {}", l.tp, l.pp, l.dp, l.cp,
                        l.gpus(), gpus),
            "a layout whose product is the cluster's GPU count");
  refuse_if(m.is_transformer() && l.pp > m.layers, "--pp", fmt::format("{} stages for {} layers", l.pp, m.layers),
            "at most one stage per layer");
  refuse_if(!m.is_transformer() && l.pp > 1, "--pp", "a generic model has no layers to stage", "--pp 1");
  refuse_if(!m.is_transformer() && l.cp > 1, "--cp", "a generic model has no sequence to split", "--cp 1");
  refuse_if(l.ep > 1 && !m.moe, "--ep", fmt::format("{} has no experts", m.name), "--ep 1 for a dense model");
  // MoE parallel folding: the experts' own grid (parallel_layout.hpp).
  refuse_if(l.etp > 0 && !m.moe, "--etp", fmt::format("{} has no experts", m.name), "no --etp for a dense model");
  if (m.moe) check_expert_grid(l, m.moe->experts);
  if (m.moe && l.ep > 1 && l.pp > 1 && o.order.inner_to_outer.back() != Axis::pp)
    refuse_if(l.gpus() / (l.expert_tp() * l.ep * l.pp) != l.dp, "--order",
              "with PP not outermost, Megatron needs the expert-data-parallel size equal to DP",
              "an order ending in pp, or ETP x EP = TP x CP");
}

// The MoE overlap in effect, refused where its schedule cannot run or there is nothing to overlap.
MoeOverlap check_moe_overlap(const ModelSpec& m, const TrainOptions& o) {
  const ParallelLayout& l = o.layout;
  if (m.moe && l.ep > 1) {
    refuse_if(o.moe_overlap == MoeOverlap::ep_a2a && l.pp > 1 && l.vpp < 2, "--moe-overlap",
              "ep-a2a merges micro-batches of the interleaved schedule, and --vpp is 1",
              "--vpp 2 or more with --pp (Megatron: 'virtual_pipeline_model_parallel_size must be specified')");
    refuse_if(o.moe_overlap == MoeOverlap::ep_a2a && o.memory.recompute == Recompute::full, "--moe-overlap",
              "ep-a2a with full recomputation", "--recompute none|selective (Megatron refuses full with it)");
    refuse_if(o.moe_overlap == MoeOverlap::dualpipe && l.pp % 2 != 0, "--moe-overlap",
              fmt::format("DualPipe runs the pipeline from both ends, and PP {} is odd", l.pp),
              "an even PP (DeepSeek-V3 report, Section 3.2.1)");
    refuse_if(o.moe_overlap == MoeOverlap::dualpipe && l.vpp > 1, "--moe-overlap",
              "DualPipe is its own schedule, not the interleaved one", "--vpp 1 with dualpipe");
    return o.moe_overlap;
  }
  refuse_if(o.moe_overlap != MoeOverlap::none && o.moe_overlap_given, "--moe-overlap",
            "overlaps expert-parallel all-to-alls, and there are none (a dense model or --ep 1)",
            "--ep 2 or more on an MoE model, or leave --moe-overlap out");
  return MoeOverlap::none;
}

// What each axis must divide, and the overlaps that need a particular layout.
void check_divisions(const ModelSpec& m, const ParallelLayout& l) {
  refuse_if(l.ep > 1 && m.moe && m.moe->experts % l.ep != 0, "--ep",
            fmt::format("EP {} does not divide the {} experts", l.ep, m.moe ? m.moe->experts : 0),
            "an EP size dividing the experts");
  refuse_if(l.cp > 1 && m.seq % (2 * l.cp) != 0, "--cp",
            fmt::format("CP {} does not split the {}-token sequence into 2 x CP equal chunks", l.cp, m.seq),
            "a CP size with 2 x CP dividing the sequence (Megatron's load-balanced causal split)");
  refuse_if(l.overlap_p2p_comm && (l.pp < 2 || l.vpp < 2), "--overlap-p2p-comm",
            "Megatron overlaps pipeline sends with compute only in the interleaved schedule",
            "--pp 2 or more with --vpp 2 or more");
  refuse_if(l.tp_comm_overlap && (l.tp < 2 || !l.sequence_parallel), "--tp-comm-overlap",
            "overlaps the all-gathers and reduce-scatters of sequence parallelism",
            "--tp 2 or more with --sequence-parallel");
  if (m.is_transformer()) {
    refuse_if(m.heads % l.tp != 0, "--tp", fmt::format("TP {} does not divide the {} heads", l.tp, m.heads),
              "a TP size dividing the attention heads");
  }
}

// The global batch in whole micro-batches per data-parallel rank, as the schedule needs them.
void split_batch(const TrainOptions& o, TrainShape& s) {
  const ParallelLayout& l = o.layout;
  s.micro_batch = o.memory.micro_batch;
  s.global_batch = o.global_batch > 0 ? o.global_batch : s.micro_batch * l.dp;
  refuse_if(s.global_batch % (s.micro_batch * l.dp) != 0, "--global-batch",
            fmt::format("{} is not a multiple of micro batch {} x DP {}", s.global_batch, s.micro_batch, l.dp),
            "a multiple of micro-batch x DP");
  s.micro_batches = s.global_batch / (s.micro_batch * l.dp);
  refuse_if(
      l.vpp > 1 && l.pp > 1 && s.micro_batches % l.pp != 0, "--vpp",
      fmt::format("the interleaved schedule runs micro-batches in groups of PP: {} micro-batches per step for PP {}",
                  s.micro_batches, l.pp),
      "a global batch giving micro-batches per step (global / (micro-batch x DP)) divisible by PP, as "
      "Megatron-LM requires");
  refuse_if(s.moe_overlap == MoeOverlap::dualpipe && s.micro_batches % 2 != 0, "--moe-overlap",
            fmt::format("DualPipe feeds micro-batches from both ends, and there are {}", s.micro_batches),
            "an even number of micro-batches per step (DeepSeek-V3 report, Section 3.2.1)");
}

}  // namespace

TrainShape check_train_shape(const ModelSpec& m, const TrainOptions& o, long gpus) {
  check_axes(m, o, gpus);
  TrainShape s;
  // The layers each stage holds, by Megatron-Core's rules (or refused with what would do).
  s.split = m.is_transformer() ? pipeline_split(split_request(m.layers, o.layout)) : PipelineSplit{{0}, 1, 1};
  s.moe_overlap = check_moe_overlap(m, o);
  check_divisions(m, o.layout);
  split_batch(o, s);
  return s;
}

}  // namespace gf::work
