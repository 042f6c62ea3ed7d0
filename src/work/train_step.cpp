#include "work/train_step.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "comm/collective_tasks.hpp"
#include "comm/model.hpp"
#include "core/error.hpp"
#include "work/ddp_step.hpp"
#include "work/fsdp_step.hpp"
#include "work/gemm_comm_overlap.hpp"
#include "work/layer_cost.hpp"
#include "work/moe_overlap.hpp"
#include "work/pipeline_split.hpp"
#include "work/pointwise_traffic.hpp"
#include "work/pp_schedule.hpp"

namespace gf::work {

namespace {

void refuse(bool cond, const std::string& flag, const std::string& what, const std::string& valid) {
  if (cond) throw InputError({}, flag, what, valid);
}

// The data-parallel groups whose traffic meets the representative group's: those on the same
// nodes (they share its NICs, PCIe switches and leaf uplinks). Groups of other pipeline stages
// share only the fabric above the leaves, and are left out.
std::vector<std::vector<long>> concurrent_groups(const std::vector<std::vector<long>>& all, long gpus_per_node) {
  std::vector<std::vector<long>> out{all.front()};
  std::vector<long> nodes;
  for (long g : all.front()) nodes.push_back(g / gpus_per_node);
  std::sort(nodes.begin(), nodes.end());
  for (std::size_t i = 1; i < all.size(); ++i) {
    const bool shares = std::any_of(all[i].begin(), all[i].end(), [&](long g) {
      return std::binary_search(nodes.begin(), nodes.end(), g / gpus_per_node);
    });
    if (shares) out.push_back(all[i]);
  }
  return out;
}

// The global GPUs of these ranks: placement[r] for rank r, or r itself when no placement is
// given (the ranks on the cluster's first GPUs).
std::vector<long> on_gpus(std::vector<long> ranks, const std::vector<long>& placement) {
  if (!placement.empty())
    for (long& r : ranks) r = placement[static_cast<std::size_t>(r)];
  return ranks;
}

std::vector<std::vector<long>> on_gpus(std::vector<std::vector<long>> groups, const std::vector<long>& placement) {
  if (!placement.empty())
    for (auto& g : groups) g = on_gpus(std::move(g), placement);
  return groups;
}

// The share of the GPU's SMs a collective's kernel holds: one CTA per channel
// (data/compute/efficiency.yaml, comm_sm_use). 0 where the file has no SM count for the GPU.
double sm_share(const topo::Topology& t, int channels) {
  const int sms = ComputeEfficiency::builtin().sm_count(t.gpu_spec());
  return sms > 0 ? std::min(1.0, static_cast<double>(channels) / sms) : 0.0;
}

// Whether every peer of the group is reached from its first GPU over NVLink (directly or through
// NVSwitch), the path Transformer Engine's userbuffers need.
bool tp_over_nvlink(const topo::Topology& t, const comm::Communicator& group) {
  for (long r = 1; r < group.ranks(); ++r)
    if (t.route_gpus(group.gpu_of(0), group.gpu_of(r)).transport != topo::Transport::nvlink) return false;
  return true;
}

// The groups gradients are reduced over: the data-parallel ones, joined with their context-
// parallel peers (the CP ranks hold the same parameters and saw different tokens), as Megatron's
// data-parallel-with-context-parallel groups. Expert parameters are reduced over this whole
// group too, not the smaller expert-data-parallel one (an approximation: per rank a ring moves
// nearly the same bytes either way).
// Every pipeline's GPUs facing each other across each stage boundary: [b] holds (stage b GPU,
// stage b + 1 GPU) pairs; the last, stage PP - 1 to stage 0, hands the interleaved schedule's
// chunks back to the first stage.
std::vector<std::vector<std::vector<long>>> stage_boundaries(const ParallelLayout& l, const RankOrder& order,
                                                             const std::vector<long>& placement) {
  std::vector<std::vector<std::vector<long>>> out(static_cast<std::size_t>(l.pp));
  for (const auto& g : on_gpus(groups(l, order, Axis::pp), placement))
    for (long b = 0; b < l.pp; ++b)
      out[static_cast<std::size_t>(b)].push_back(
          {g[static_cast<std::size_t>(b)], g[static_cast<std::size_t>((b + 1) % l.pp)]});
  return out;
}

// The slowest boundary of GPU 0's pipeline (the first that crosses servers, else the first)
// and the pairs across it that share a node with GPU 0's pair. Without a placement only the
// GPUs of those two nodes are looked at (a planner prices many layouts on large clusters).
TrainingContext::PipelinePairs pipeline_boundaries(const ParallelLayout& l, const RankOrder& order,
                                                   const std::vector<long>& placement, long per_node) {
  const auto first = on_gpus(group_of(l, order, Axis::pp, 0), placement);
  std::size_t b = 0;
  for (std::size_t s = 0; s + 1 < first.size(); ++s) {
    if (first[s] / per_node != first[s + 1] / per_node) {
      b = s;
      break;
    }
  }
  TrainingContext::PipelinePairs out;
  if (!placement.empty()) {
    out.slowest = concurrent_groups(stage_boundaries(l, order, placement)[b], per_node);
    return out;
  }
  out.slowest.push_back({first[b], first[b + 1]});
  for (const long node : {first[b] / per_node, first[b + 1] / per_node}) {
    for (long g = node * per_node; g < std::min((node + 1) * per_node, l.gpus()); ++g) {
      const auto pipeline = group_of(l, order, Axis::pp, g);  // in stage order (ranks ascend with the stage)
      if (pipeline[b] != g && pipeline[b + 1] != g) continue;
      std::vector<long> pair{pipeline[b], pipeline[b + 1]};
      if (std::find(out.slowest.begin(), out.slowest.end(), pair) == out.slowest.end())
        out.slowest.push_back(std::move(pair));
    }
  }
  return out;
}

std::vector<std::vector<long>> gradient_groups(const ParallelLayout& l, const RankOrder& order) {
  auto dp = groups(l, order, Axis::dp);
  if (l.cp <= 1) return dp;
  std::vector<std::vector<long>> out;
  std::vector<bool> seen(static_cast<std::size_t>(l.gpus()), false);
  for (const auto& g : dp) {
    if (seen[static_cast<std::size_t>(g.front())]) continue;
    std::vector<long> joined;
    for (long gpu : g)
      for (long peer : group_of(l, order, Axis::cp, gpu)) joined.push_back(peer);
    std::sort(joined.begin(), joined.end());
    for (long gpu : joined) seen[static_cast<std::size_t>(gpu)] = true;
    out.push_back(std::move(joined));
  }
  return out;
}

// ZeRO-3 and FSDP FULL_SHARD shard over the whole data-parallel group; HYBRID_SHARD over the
// group's ranks inside one node, replicated across nodes.
DdpStep fully_sharded(TrainingContext& cache, const ParallelLayout& l, const TrainOptions& o,
                      const std::vector<LayerCost>& layers, TrainResult& out, double optimizer_s,
                      const BackgroundJob* other_job) {
  const topo::Topology& t = cache.topology();
  const long per_node = t.gpus_per_node();
  const auto all = on_gpus(gradient_groups(l, o.order), o.placement);
  std::vector<std::vector<long>> shards;
  std::vector<long> replicas;  // the representative shard's peers on the other nodes
  if (o.memory.sharding == Sharding::fsdp_hybrid) {
    for (const auto& g : all) {
      std::map<long, std::vector<long>> by_node;
      for (long gpu : g) by_node[gpu / per_node].push_back(gpu);
      for (auto& [node, members] : by_node) shards.push_back(members);
    }
    const std::size_t position = 0;  // GPU 0 is the first rank of its node's shard
    std::map<long, std::vector<long>> by_node;
    for (long gpu : all.front()) by_node[gpu / per_node].push_back(gpu);
    for (const auto& [node, members] : by_node) replicas.push_back(members[position]);
  } else {
    shards = all;
  }
  FsdpOptions f;
  f.record = o.record_timeline;
  f.accumulation = out.micro_batches;
  f.optimizer_s = optimizer_s;
  f.param_bytes = o.memory.precision == Precision::fp32 ? 4 : 2;
  // Gradients are reduced in fp32 under mixed precision as the FSDP frameworks configure it by
  // default: torchtitan's `mixed_precision_reduce = "float32"` (FSDP2), Composer's `DEFAULT`
  // mixed precision (FSDP1: bf16 parameters, fp32 reduction), as Megatron's main gradients are.
  f.grad_bytes = 4;
  f.replicate = replicas.size() > 1;
  f.replica_fraction = 1.0 / static_cast<double>(shards.front().size());
  const std::string dtype = o.memory.precision == Precision::fp32 ? "float" : "bfloat16";
  const auto together = concurrent_groups(shards, per_node);
  const comm::Communicator& shard = cache.communicator(shards.front());
  const double reference = 25.0 * 1024 * 1024;  // a layer's worth, for the contention ratio
  const double gather_stretch = cache.contention(together, comm::Op::all_gather, reference, dtype, other_job);
  const double scatter_stretch = cache.contention(together, comm::Op::reduce_scatter, reference, dtype, other_job);
  const comm::Communicator* replica = f.replicate ? &cache.communicator(replicas) : nullptr;
  f.sm_share = sm_share(t, cache.collective(shard, comm::Op::all_gather, reference, dtype).channels);
  auto time_of = [&](comm::Op op, double bytes) {
    if (shard.ranks() < 2 && op != comm::Op::all_reduce) return CollectiveTimes{};
    const comm::Communicator& c = op == comm::Op::all_reduce ? *replica : shard;
    const auto& r = cache.collective(c, op, bytes, dtype);
    const double stretch = op == comm::Op::all_gather       ? gather_stretch
                           : op == comm::Op::reduce_scatter ? scatter_stretch
                                                            : 1.0;
    return CollectiveTimes{r.time.value(), (r.time + r.data_time * (stretch - 1)).value()};
  };
  out.assumptions.push_back(fmt::format(
      "fully sharded: parameters gathered in {} and gradients reduced in fp32 every micro-batch, one FSDP unit per "
      "layer, gathers one layer ahead",
      dtype));
  return fsdp_schedule(layers, f, time_of);
}

}  // namespace

TrainResult train_step(const topo::Topology& t, const ModelSpec& m, const TrainOptions& o) {
  TrainingContext context(t);
  return train_step(context, m, o);
}

TrainResult train_step(TrainingContext& cache, const ModelSpec& m, const TrainOptions& o) {
  const topo::Topology& t = cache.topology();
  const ParallelLayout& l = o.layout;
  const bool placed = !o.placement.empty();
  const long gpus = placed ? static_cast<long>(o.placement.size()) : o.gpus > 0 ? o.gpus : t.gpu_count();
  refuse(gpus > t.gpu_count(), "--gpus", fmt::format("{} GPUs asked for; the cluster has {}", gpus, t.gpu_count()),
         "at most the cluster's GPUs");
  if (placed) {
    // A placement may leave parts of nodes (a scheduler's choice); it must name distinct GPUs.
    refuse(o.gpus > 0 && o.gpus != gpus, "--gpus",
           fmt::format("{} GPUs asked for, but the placement names {}", o.gpus, gpus), "as many GPUs as the placement");
    std::vector<long> sorted = o.placement;
    std::sort(sorted.begin(), sorted.end());
    refuse(sorted.front() < 0 || sorted.back() >= t.gpu_count(), "placement",
           fmt::format("GPU {} is not in the cluster's {}", sorted.front() < 0 ? sorted.front() : sorted.back(),
                       t.gpu_count()),
           fmt::format("global GPU indices 0 to {}", t.gpu_count() - 1));
    refuse(std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end(), "placement", "names a GPU twice",
           "one rank per GPU");
  } else {
    refuse(gpus > t.gpus_per_node() && gpus % t.gpus_per_node() != 0, "--gpus",
           fmt::format("{} GPUs do not fill whole {}-GPU nodes", gpus, t.gpus_per_node()),
           "a multiple of the GPUs per node, or at most one node's");
  }
  refuse(l.gpus() != gpus, "--dp",
         fmt::format("TP {} x PP {} x DP {} x CP {} = {} GPUs, but the cluster has {}", l.tp, l.pp, l.dp, l.cp,
                     l.gpus(), gpus),
         "a layout whose product is the cluster's GPU count");
  refuse(m.is_transformer() && l.pp > m.layers, "--pp", fmt::format("{} stages for {} layers", l.pp, m.layers),
         "at most one stage per layer");
  refuse(!m.is_transformer() && l.pp > 1, "--pp", "a generic model has no layers to stage", "--pp 1");
  refuse(!m.is_transformer() && l.cp > 1, "--cp", "a generic model has no sequence to split", "--cp 1");
  refuse(l.ep > 1 && !m.moe, "--ep", fmt::format("{} has no experts", m.name), "--ep 1 for a dense model");
  // MoE parallel folding: the experts' own grid (parallel_layout.hpp).
  refuse(l.etp > 0 && !m.moe, "--etp", fmt::format("{} has no experts", m.name), "no --etp for a dense model");
  if (m.moe) check_expert_grid(l, m.moe->experts);
  if (m.moe && l.ep > 1 && l.pp > 1 && o.order.inner_to_outer.back() != Axis::pp)
    refuse(l.gpus() / (l.expert_tp() * l.ep * l.pp) != l.dp, "--order",
           "with PP not outermost, Megatron needs the expert-data-parallel size equal to DP",
           "an order ending in pp, or ETP x EP = TP x CP");
  // The layers each stage holds, by Megatron-Core's rules (or refused with what would do).
  const PipelineSplit split =
      m.is_transformer() ? pipeline_split(split_request(m.layers, l)) : PipelineSplit{{0}, 1, 1};
  const MoeOverlap moe_overlap = m.moe && l.ep > 1 ? o.moe_overlap : MoeOverlap::none;
  if (m.moe && l.ep > 1) {
    refuse(o.moe_overlap == MoeOverlap::ep_a2a && l.pp > 1 && l.vpp < 2, "--moe-overlap",
           "ep-a2a merges micro-batches of the interleaved schedule, and --vpp is 1",
           "--vpp 2 or more with --pp (Megatron: 'virtual_pipeline_model_parallel_size must be specified')");
    refuse(o.moe_overlap == MoeOverlap::ep_a2a && o.memory.recompute == Recompute::full, "--moe-overlap",
           "ep-a2a with full recomputation", "--recompute none|selective (Megatron refuses full with it)");
    refuse(o.moe_overlap == MoeOverlap::dualpipe && l.pp % 2 != 0, "--moe-overlap",
           fmt::format("DualPipe runs the pipeline from both ends, and PP {} is odd", l.pp),
           "an even PP (DeepSeek-V3 report, Section 3.2.1)");
    refuse(o.moe_overlap == MoeOverlap::dualpipe && l.vpp > 1, "--moe-overlap",
           "DualPipe is its own schedule, not the interleaved one", "--vpp 1 with dualpipe");
  } else {
    refuse(o.moe_overlap != MoeOverlap::none && o.moe_overlap_given, "--moe-overlap",
           "overlaps expert-parallel all-to-alls, and there are none (a dense model or --ep 1)",
           "--ep 2 or more on an MoE model, or leave --moe-overlap out");
  }
  refuse(l.ep > 1 && m.moe && m.moe->experts % l.ep != 0, "--ep",
         fmt::format("EP {} does not divide the {} experts", l.ep, m.moe ? m.moe->experts : 0),
         "an EP size dividing the experts");
  refuse(l.cp > 1 && m.seq % (2 * l.cp) != 0, "--cp",
         fmt::format("CP {} does not split the {}-token sequence into 2 x CP equal chunks", l.cp, m.seq),
         "a CP size with 2 x CP dividing the sequence (Megatron's load-balanced causal split)");
  refuse(l.overlap_p2p_comm && (l.pp < 2 || l.vpp < 2), "--overlap-p2p-comm",
         "Megatron overlaps pipeline sends with compute only in the interleaved schedule",
         "--pp 2 or more with --vpp 2 or more");
  refuse(l.tp_comm_overlap && (l.tp < 2 || !l.sequence_parallel), "--tp-comm-overlap",
         "overlaps the all-gathers and reduce-scatters of sequence parallelism",
         "--tp 2 or more with --sequence-parallel");
  if (m.is_transformer()) {
    refuse(m.heads % l.tp != 0, "--tp", fmt::format("TP {} does not divide the {} heads", l.tp, m.heads),
           "a TP size dividing the attention heads");
  }
  const long micro = o.memory.micro_batch;
  const long global = o.global_batch > 0 ? o.global_batch : micro * l.dp;
  refuse(global % (micro * l.dp) != 0, "--global-batch",
         fmt::format("{} is not a multiple of micro batch {} x DP {}", global, micro, l.dp),
         "a multiple of micro-batch x DP");

  TrainResult out;
  out.gpus = gpus;
  out.micro_batches = global / (micro * l.dp);
  out.global_batch = global;
  refuse(l.vpp > 1 && l.pp > 1 && out.micro_batches % l.pp != 0, "--vpp",
         fmt::format("the interleaved schedule runs micro-batches in groups of PP: {} micro-batches per step for PP {}",
                     out.micro_batches, l.pp),
         "a global batch giving micro-batches per step (global / (micro-batch x DP)) divisible by PP, as Megatron-LM "
         "requires");
  refuse(moe_overlap == MoeOverlap::dualpipe && out.micro_batches % 2 != 0, "--moe-overlap",
         fmt::format("DualPipe feeds micro-batches from both ends, and there are {}", out.micro_batches),
         "an even number of micro-batches per step (DeepSeek-V3 report, Section 3.2.1)");
  MemoryOptions mem = o.memory;
  mem.micro_batches = out.micro_batches;
  mem.gpus_per_node = t.gpus_per_node();
  mem.dualpipe = moe_overlap == MoeOverlap::dualpipe;
  out.memory = training_memory(m, l, mem);
  out.gpu_memory = t.gpu_spec().memory.value();
  out.fits = out.memory.total <= out.gpu_memory;
  if (!out.fits) out.fit_options = fit_options(m, l, mem, global, out.gpu_memory);

  const auto& eff = ComputeEfficiency::builtin();
  ComputeContext base{t.gpu_spec(), o.memory.precision, eff};
  if (o.gemm_tflops > 0) {
    const double fraction = o.gemm_tflops * 1e12 / peak_flops(base);
    refuse(!(fraction <= 1.05), "--compute-profile",
           fmt::format("{:.0f} TFLOP/s measured is above the {}'s {} peak of {:.0f}", o.gemm_tflops, t.gpu_spec().name,
                       to_string(o.memory.precision), peak_flops(base) / 1e12),
           "a profile measured on this cluster's GPU");
    base.gemm_ceiling = std::min(1.0, fraction);
    out.assumptions.push_back(fmt::format("GEMMs at {:.0f} TFLOP/s ({:.0f}% of peak) as measured: {}", o.gemm_tflops,
                                          100 * base.gemm_ceiling, o.gemm_source));
  }
  // Layers pay the per-kernel device floor and the host's enqueue interval (kernel_launch.hpp).
  base.launch = &KernelLaunch::builtin();
  const ComputeContext ctx = resolve_rates(base);
  const std::string dtype = o.memory.precision == Precision::fp32 ? "float" : "bfloat16";
  // The groups the representative GPU 0 belongs to.
  const comm::Communicator* tp_group =
      l.tp > 1 ? &cache.communicator(on_gpus(group_of(l, o.order, Axis::tp, 0), o.placement)) : nullptr;
  auto tp_collective_s = [&](double bytes) {
    // An all-reduce; with sequence parallelism a reduce-scatter and an all-gather moving the same.
    if (tp_group == nullptr || bytes <= 0) return 0.0;
    return cache.collective(*tp_group, comm::Op::all_reduce, bytes, dtype).time.value();
  };

  std::vector<LayerCost> layers;
  double pp_p2p_s = 0;     // one stage-to-stage send of a micro-batch's activations, all peers at once
  double pp_bytes = 0;     // what one GPU sends across a stage boundary per micro-batch
  double pp_gather_s = 0;  // without sequence parallelism: the TP all-gather after each send
  const TrainingContext::PipelinePairs* pp_boundaries = nullptr;
  double params_here = 0;
  bool tp_overlap = false;  // the TP collectives run under the GEMMs (--tp-comm-overlap over NVLink)
  if (m.is_transformer()) {
    const double tokens = static_cast<double>(micro * m.seq) / static_cast<double>(l.cp);
    const double h = static_cast<double>(m.hidden);
    // Ring attention: each of CP - 1 steps passes a key/value chunk to the next CP rank while
    // the attention core works on the one it holds (Transformer Engine's context parallelism);
    // backward passes the chunk and its gradient. Only what the core does not cover shows.
    const std::vector<long> cp_ring =
        l.cp > 1 ? on_gpus(group_of(l, o.order, Axis::cp, 0), o.placement) : std::vector<long>{};
    auto cp_exposed = [&](const TransformerLayerCost& c) {
      if (cp_ring.size() < 2 || c.cp_chunk_bytes <= 0) return std::pair{0.0, 0.0};
      const double step =
          cache.collective({cp_ring[0], cp_ring[1]}, comm::Op::sendrecv, c.cp_chunk_bytes, dtype).time.value();
      const double steps = static_cast<double>(l.cp - 1);
      return std::pair{std::max(0.0, steps * step - c.attention_core_forward),
                       std::max(0.0, 2 * steps * step - c.attention_core_backward)};
    };
    // Expert parallelism: dispatch and combine all-to-alls in each MoE layer's forward and again
    // in its backward, in the critical path.
    const comm::Communicator* ep_group =
        l.ep > 1 ? &cache.communicator(on_gpus(group_of(l, o.order, Axis::ep, 0), o.placement)) : nullptr;
    if (l.ep > 1 && l.tp > 1 && !l.sequence_parallel)
      out.assumptions.push_back(
          "EP with TP but without --sequence-parallel: every TP rank dispatches the whole micro-batch's tokens "
          "(Megatron-Core refuses this combination: its TransformerConfig requires sequence parallelism)");
    auto dispatch_s = [&](const TransformerLayerCost& c) {
      if (ep_group == nullptr || c.dispatch_bytes <= 0) return 0.0;
      return cache.collective(*ep_group, comm::Op::alltoall, c.dispatch_bytes, dtype).time.value();
    };
    // Embedding lookup is memory work; the output projection a GEMM over the vocabulary.
    const double vocab_here = static_cast<double>(m.vocab) / static_cast<double>(l.tp);
    // Transformer Engine's userbuffers overlap runs only where every TP peer is reached over
    // NVLink inside one server (data/compute/efficiency.yaml, tp_comm_overlap); elsewhere the
    // flag changes nothing and the collectives stay in the critical path.
    tp_overlap = l.tp_comm_overlap && tp_group != nullptr && tp_over_nvlink(t, *tp_group);
    if (tp_overlap && !t.node().nvswitch_sharp())
      out.assumptions.push_back(
          "--tp-comm-overlap here runs without CUDA multicast (no NVLink-SHARP NVSwitch): Transformer Engine's "
          "initialize_ub refuses that unless UB_SKIPMC=1 is set, which sends the userbuffers over CUDA IPC");
    if (l.tp_comm_overlap && !tp_overlap)
      out.assumptions.push_back(
          "--tp-comm-overlap asked for, but the TP group is not joined by NVLink inside one server: Transformer "
          "Engine's userbuffers overlap needs that, so the TP collectives are in the critical path");
    // The output projection's GEMM and the loss over its logits (memory-bound: pointwise_traffic).
    const LossBytes loss = cross_entropy_bytes(o.memory.precision, mem.kernels, mem.cross_entropy_fusion);
    const double head_tokens = tokens * mem.head_token_fraction;
    const double head_gemm = gemm_seconds(ctx, head_tokens, vocab_here, h);
    const double head_f = head_gemm + memory_seconds(ctx, head_tokens * vocab_here * loss.forward);
    const double head_b = 2 * head_gemm + memory_seconds(ctx, head_tokens * vocab_here * loss.backward);
    // The steady-state share of the micro-batches whose forward can run merged with another's
    // backward (Megatron's ep-a2a overlap): all but the warm-up forwards.
    const double paired = [&] {
      const long chunks = std::max<long>(1, l.vpp);
      const double total = static_cast<double>(out.micro_batches * chunks);
      if (l.pp <= 1) return (total - 1) / total;
      const long warm = warmup_forwards({l.pp, chunks, out.micro_batches, l.overlap_p2p_comm}, 0);
      return std::max(0.0, total - static_cast<double>(warm)) / total;
    }();
    double a2a_sm_share = 0;
    if (ep_group != nullptr && moe_overlap != MoeOverlap::none)
      a2a_sm_share = sm_share(t, cache.collective(*ep_group, comm::Op::alltoall, 1 << 20, dtype).channels);
    // One layer's entry in the step and what it adds to the breakdown per micro-batch.
    struct Built {
      LayerCost layer;
      double tp_s = 0, cp_s = 0, ep_s = 0, params = 0;
      double passes_s = 0, launch_s = 0, host_wait_s = 0;  // the layer's own passes; what launches add
    };
    auto build_layer = [&](bool moe) {
      const TransformerLayerCost c = transformer_layer_cost(m, l, mem, ctx, moe);
      double tp_s = tp_collective_s(c.tp_bytes);
      // With --tp-comm-overlap over NVLink the all-gather and reduce-scatter of each half run in
      // chunks under the GEMM they feed or drain (Transformer Engine's userbuffers): what the
      // chunks cannot cover shows, and so does what the split and the scatter's SMs cost the
      // GEMM. The backward's data-gradient GEMMs have the same shapes.
      if (tp_overlap && tp_s > 0) {
        const double half = tp_s / 2;
        const UserbuffersOverlap& ub = ctx.efficiency.userbuffers();
        double cost = 0;
        for (const OverlapCost& x : {ring_exchange_all_gather(half, c.attention_entry_gemm, l.tp, ctx.fixed_s),
                                     pipelined_reduce_scatter(half, c.attention_exit_gemm, ctx.sms, ub, ctx.fixed_s),
                                     ring_exchange_all_gather(half, c.ffn_entry_gemm, l.tp, ctx.fixed_s),
                                     pipelined_reduce_scatter(half, c.ffn_exit_gemm, ctx.sms, ub, ctx.fixed_s)})
          cost += x.exposed_s + x.extra_compute_s;
        tp_s = cost / 2;  // the mean over the two halves, as tp_s stands for either
      }
      const auto [cp_f, cp_b] = cp_exposed(c);
      const double a2a = dispatch_s(c);
      const MoeExposure x = exposed_all_to_all(
          moe_overlap, {a2a, c.attention_forward + c.ffn_forward, c.shared_expert_forward},
          {a2a, c.attention_backward + c.ffn_backward, c.shared_expert_backward}, paired, a2a_sm_share);
      Built b;
      b.layer = {"",
                 c.attention_forward + c.ffn_forward + 2 * tp_s + cp_f + x.forward_s,
                 c.attention_backward + c.ffn_backward + 2 * tp_s + cp_b + x.backward_s,
                 c.gradient_bytes,
                 2 * tp_s + cp_f + x.forward_s,
                 2 * tp_s + cp_b + x.backward_s};
      b.tp_s = 4 * tp_s;
      b.cp_s = cp_f + cp_b;
      b.ep_s = x.forward_s + x.backward_s;
      b.params = c.gradient_bytes / 4;
      b.passes_s = c.attention_forward + c.ffn_forward + c.attention_backward + c.ffn_backward;
      b.launch_s = c.launch_s;
      b.host_wait_s = c.host_wait_s;
      return b;
    };
    const Built dense = build_layer(false);
    const Built expert = m.moe ? build_layer(true) : dense;
    // What kernel launches cost a layer (kernel_launch.hpp), said where it is worth saying.
    if (dense.passes_s > 0 && dense.launch_s > 0.01 * dense.passes_s)
      out.assumptions.push_back(fmt::format(
          "kernel launches add {:.0f}% to a layer's forward and backward ({:.0f}% of it the GPU waiting for the host "
          "to enqueue {} kernels at {:.1f} us each): data/compute/kernel_launch.yaml",
          100 * dense.launch_s / (dense.passes_s - dense.launch_s), 100 * dense.host_wait_s / dense.launch_s,
          to_string(mem.kernels), 1e6 * KernelLaunch::builtin().host_interval_s()));
    auto is_moe = [&](long i) { return m.moe && i >= m.moe->dense_layers; };
    // The stage with the most work paces the pipeline (1F1B runs at the pace of the slowest
    // stage): every stage's layers (pipeline_split.hpp) with the embedding on the first and the
    // output projection and loss on the last.
    const double head_cost = head_f + head_b;
    const double embed_cost = memory_seconds(ctx, tokens * h * 2);
    long slowest = 0;
    double slowest_s = -1;
    const auto by_stage = split.layers_by_stage();
    for (long st = 0; st < l.pp; ++st) {
      double cost = (st == 0 ? embed_cost : 0.0) + (st == l.pp - 1 ? head_cost : 0.0);
      for (const long i : by_stage[static_cast<std::size_t>(st)]) {
        const auto& b = is_moe(i) ? expert.layer : dense.layer;
        cost += b.forward_s + b.backward_s;
      }
      if (cost > slowest_s) {
        slowest_s = cost;
        slowest = st;
      }
    }
    const bool last_stage = l.pp > 1 && slowest == l.pp - 1;
    const bool first_stage = slowest == 0;
    for (const long i : by_stage[static_cast<std::size_t>(slowest)]) {
      const Built& b = is_moe(i) ? expert : dense;
      layers.push_back(b.layer);
      layers.back().name = fmt::format("layer {}", i);
      const double mbs = static_cast<double>(out.micro_batches);
      out.breakdown.tp_s += b.tp_s * mbs;
      out.breakdown.cp_s += b.cp_s * mbs;
      out.breakdown.ep_s += b.ep_s * mbs;
      params_here += b.params;
    }
    if (l.pp > 1 && (split.most_layers() * l.pp != m.layers || split.vpp > 1))
      out.assumptions.push_back(
          fmt::format("pipeline stages hold {} layers (stage {} is the slowest and paces the "
                      "pipeline{})",
                      stage_summary(split), slowest, l.split.layout.empty() ? "" : ", layout " + l.split.layout));
    if (moe_overlap != MoeOverlap::none)
      out.assumptions.push_back(fmt::format(
          "MoE all-to-alls overlapped ({}){}; hidden all-to-alls hold {:.0f}% of the SMs", to_string(moe_overlap),
          moe_overlap == MoeOverlap::ep_a2a
              ? fmt::format(": {:.0f}% of the micro-batches run merged with another's backward", 100 * paired)
          : moe_overlap == MoeOverlap::dualpipe ? ": every forward chunk merged with a backward chunk (DualPipe)"
                                                : ": the shared experts run beside dispatch and combine",
          100 * a2a_sm_share));
    const double vocab_params = static_cast<double>(m.vocab) * h / static_cast<double>(l.tp);
    if (l.pp == 1 || last_stage) {
      layers.push_back({"output", head_f, head_b, vocab_params * (m.tied_embeddings ? 0 : 4)});
      params_here += vocab_params;
    }
    if (l.pp == 1 || first_stage) {
      layers.insert(layers.begin(), LayerCost{"embedding", embed_cost, 0, vocab_params * 4});
      params_here += vocab_params;
    }
    // Activations sent between stages per micro-batch (scattered over TP with sequence
    // parallelism), forward and backward. Every boundary passes every micro-batch, so the
    // slowest one paces the pipeline: a boundary between servers when there is one (stages
    // packed into one server when TP x CP x DP is smaller than it are joined by NVLink or
    // PCIe, the next pair may cross the network), else the first.
    if (l.pp > 1) {
      // Each TP rank sends its 1/TP of the activations: sequence parallelism leaves them split;
      // without it Megatron splits them before the send and all-gathers them over the TP group
      // after (Narayanan et al., SC'21, Section 4.1, "scatter/gather communication
      // optimization", on by default).
      const double activations = tokens * h * (o.memory.precision == Precision::fp32 ? 4 : 2);
      pp_bytes = activations / static_cast<double>(l.tp);
      const auto& pipe = cache.pipeline_pairs(
          l, o.order, o.placement, [&] { return pipeline_boundaries(l, o.order, o.placement, t.gpus_per_node()); });
      // Every tensor-, context- and data-parallel peer sends its share across the boundary at
      // the same moment, over the NICs and switches they share.
      const auto& alone = cache.collective(pipe.slowest.front(), comm::Op::sendrecv, pp_bytes, dtype);
      const double stretch = cache.contention(pipe.slowest, comm::Op::sendrecv, pp_bytes, dtype);
      pp_p2p_s = (alone.time + alone.data_time * (stretch - 1)).value();
      if (!l.sequence_parallel && tp_group != nullptr)
        pp_gather_s = cache.collective(*tp_group, comm::Op::all_gather, activations, dtype).time.value();
      pp_p2p_s += pp_gather_s;
      pp_boundaries = &pipe;
    }
  } else {
    // A generic model: its forward FLOPs per sample at the GEMM ceiling, backward twice that;
    // beside them the memory-bound kernels between (normalisation, activation functions). Where
    // the model file counts the bytes its step's kernels move through HBM, those, two fifths in
    // the forward pass; else every activation byte the step keeps is written and read in the
    // forward pass, and read, with its gradient written and read, in the backward pass (a
    // floor). The file's bytes are 16-bit ones; fp32 doubles them.
    const double flops = m.flops_per_sample * static_cast<double>(micro);
    const double width = o.memory.precision == Precision::fp32 ? 2 : 1;
    const double traffic =
        (m.step_hbm_bytes_per_sample > 0 ? m.step_hbm_bytes_per_sample : 5 * m.activation_bytes_per_sample) *
        static_cast<double>(micro) * width;
    const double fwd = flops / (ctx.peak * ctx.ceiling) + memory_seconds(ctx, 0.4 * traffic);
    const double bwd = 2 * flops / (ctx.peak * ctx.ceiling) + memory_seconds(ctx, 0.6 * traffic);
    // Gradients appear through the backward pass: spread them over ten equal blocks.
    for (int i = 0; i < 10; ++i) layers.push_back({fmt::format("block {}", i), fwd / 10, bwd / 10, m.params * 4 / 10});
    params_here = m.params;
    out.assumptions.push_back(
        m.step_hbm_bytes_per_sample > 0
            ? "a generic model's FLOPs run at its GPU's GEMM ceiling and its kernels move the model file's HBM bytes "
              "per sample, in ten equal blocks"
            : "a generic model's FLOPs run at its GPU's GEMM ceiling and its activations cross HBM five times a step, "
              "in ten equal blocks");
  }
  // The optimizer: Adam streams weights, gradients and its states through HBM (about 30 bytes
  // per parameter held, read and written), sharded as the optimizer states are.
  const double shards =
      mem.sharding != Sharding::none || mem.distributed_optimizer ? static_cast<double>(l.dp * l.cp) : 1.0;
  out.breakdown.optimizer_s = memory_seconds(ctx, params_here * 30 / shards);

  DdpOptions d;
  d.bucket_bytes = o.memory.bucket_bytes;
  d.accumulation = out.micro_batches;
  d.optimizer_s = out.breakdown.optimizer_s;
  d.dtype = "float";  // fp32 main gradients
  d.record = o.record_timeline;
  const bool sharded = mem.sharding == Sharding::zero1 || mem.sharding == Sharding::zero2 ||
                       mem.sharding == Sharding::fsdp_grad_op || mem.distributed_optimizer;
  d.reduce_scatter = sharded;
  d.gather_bytes = sharded ? params_here * (o.memory.precision == Precision::fp32 ? 4 : 2) : 0;
  d.overlap_param_gather = mem.distributed_optimizer && mem.overlap_param_gather;
  // Another job on the GPUs this one leaves free.
  BackgroundJob background;
  if (o.background_bytes > 0) {
    refuse(gpus >= t.gpu_count() || t.gpu_count() - gpus < 2, "--background", "no GPUs are left for another job",
           "--gpus N with at least two of the cluster's GPUs left over");
    if (placed) {
      // The GPUs the placement leaves, wherever they are.
      std::vector<bool> mine(static_cast<std::size_t>(t.gpu_count()), false);
      for (long g : o.placement) mine[static_cast<std::size_t>(g)] = true;
      for (long g = 0; g < t.gpu_count(); ++g)
        if (!mine[static_cast<std::size_t>(g)]) background.gpus.push_back(g);
    } else {
      refuse((t.gpu_count() - gpus) % t.gpus_per_node() != 0 && gpus > t.gpus_per_node(), "--background",
             "the GPUs left over do not fill whole nodes", "--gpus N leaving whole nodes");
      for (long g = gpus; g < t.gpu_count(); ++g) background.gpus.push_back(g);
    }
    background.op = o.background_op;
    background.bytes = o.background_bytes;
    out.assumptions.push_back(fmt::format("another job on the {} GPUs left runs {} of {:.3g} MB back to back",
                                          background.gpus.size(), comm::to_string(background.op),
                                          background.bytes / 1e6));
  }
  const BackgroundJob* other_job = background.gpus.empty() ? nullptr : &background;
  const bool full_shard =
      mem.sharding == Sharding::zero3 || mem.sharding == Sharding::fsdp_full || mem.sharding == Sharding::fsdp_hybrid;
  // Gradients reduced in bf16 (Megatron's --grad-reduce-in-bf16, NeMo's grad_sync_dtype=bf16):
  // half the bytes of every bucket, in buckets of the same cap.
  if (mem.grad_reduce_bf16 && !full_shard) {
    for (auto& layer : layers) layer.gradient_bytes /= 2;
    d.dtype = "bfloat16";
    out.assumptions.push_back("gradients reduced in bf16");
  }
  DdpStep s;
  const bool reduces = l.dp * l.cp > 1;
  if (reduces && full_shard) {
    s = fully_sharded(cache, l, o, layers, out, d.optimizer_s, other_job);
  } else if (reduces) {
    const auto& shape = cache.layout_groups(l, o.order, o.placement, [&] {
      TrainingContext::LayoutGroups g;
      g.gradient = on_gpus(gradient_groups(l, o.order), o.placement);
      g.concurrent = concurrent_groups(g.gradient, t.gpus_per_node());
      return g;
    });
    const auto& all = shape.gradient;
    const auto& mine = all.front();
    if (o.full_graph) {
      std::vector<const comm::Communicator*> dp;
      for (const auto& g : all) dp.push_back(&cache.communicator(g));
      s = ddp_step(dp, layers, d);
    } else {
      // Every bucket's collective as the communication layer prices it for this group, its
      // data part stretched by the groups it shares links with (measured once, on the flow
      // engine, for a bucket of the cap's size all starting together).
      const auto& together = shape.concurrent;
      const comm::Op reduce = d.reduce_scatter ? comm::Op::reduce_scatter : comm::Op::all_reduce;
      const double reduce_stretch = cache.contention(together, reduce, d.bucket_bytes, d.dtype, other_job);
      const double gather_stretch =
          d.gather_bytes > 0 ? cache.contention(together, comm::Op::all_gather, d.bucket_bytes, d.dtype, other_job)
                             : 1.0;
      const comm::Communicator& group = cache.communicator(mine);
      d.sm_share = sm_share(t, cache.collective(group, reduce, d.bucket_bytes, d.dtype).channels);
      auto time_of = [&](comm::Op op, double bytes) {
        const auto& r = cache.collective(group, op, bytes, d.dtype);
        const double stretch = op == comm::Op::all_gather ? gather_stretch : reduce_stretch;
        return CollectiveTimes{r.time.value(), (r.time + r.data_time * (stretch - 1)).value()};
      };
      s = ddp_schedule(layers, d, time_of);
      if (together.size() < all.size())
        out.assumptions.push_back(
            fmt::format("the {} data-parallel groups on the representative group's nodes are simulated together; the "
                        "other {} share only the fabric above the leaves and are left out",
                        together.size(), all.size() - together.size()));
    }
  } else {
    std::vector<double> ready;
    s.compute_s = run_layers(layers, out.micro_batches, 0, ready, o.record_timeline ? &s.events : nullptr);
    if (o.record_timeline) s.events.push_back({kComputeTrack, "optimizer", s.compute_s, d.optimizer_s});
    s.compute_s += d.optimizer_s;
    s.step_s = s.compute_s;
  }
  // The pipeline (pp_schedule.hpp): Megatron's 1F1B or interleaved schedule; its fill and drain
  // and the sends in its critical path come on top of the representative stage's own step.
  double forward_micro = 0;
  double backward_micro = 0;
  for (const auto& layer : layers) {
    forward_micro += layer.forward_s;
    backward_micro += layer.backward_s;
  }
  const long chunks = std::max<long>(1, l.vpp);
  PipelineShape pipe{l.pp, chunks, out.micro_batches, l.overlap_p2p_comm};
  pipe.dualpipe = moe_overlap == MoeOverlap::dualpipe;
  const double chunk_forward = forward_micro / static_cast<double>(chunks);
  const double chunk_backward = backward_micro / static_cast<double>(chunks);
  const PipelineCost pcost = pipeline_closed_form(pipe, chunk_forward, chunk_backward, pp_p2p_s);
  out.breakdown.pp_bubble_s = pcost.bubble_s;
  out.breakdown.pp_p2p_s = pcost.transfers_s;
  if (l.pp > 1)
    out.assumptions.push_back(fmt::format(
        "pipeline: Megatron's {} schedule with {}; one send of {:.3g} MB (1/TP of the activations) across the "
        "slowest stage boundary takes {:.3g} ms with its peers'{}",
        chunks > 1 ? "interleaved 1F1B" : "1F1B",
        l.overlap_p2p_comm ? "sends posted ahead (--overlap-p2p-comm)"
                           : "blocking batched sends (no --overlap-p2p-comm)",
        pp_bytes / 1e6, 1e3 * pp_p2p_s, pp_gather_s > 0 ? " and the TP all-gather after it" : ""));
  if (l.pp > 1 && o.full_graph && pp_boundaries != nullptr) {
    // The reference: the schedule on the flow engine, every peer's send across every boundary
    // as the communication layer's flows, sharing links with the others at that moment.
    const auto boundaries = stage_boundaries(l, o.order, o.placement);
    const auto graph =
        build_pipeline(pipe, chunk_forward, chunk_backward, [&](sim::TaskGraph& g, long from, long to, bool) {
          // A send to the next stage runs over boundary `from`'s pairs, a gradient back over `to`'s.
          const bool back = to != (from + 1) % l.pp;
          const auto& pairs = boundaries[static_cast<std::size_t>(back ? to : from)];
          // The receivers' all-gather of the scattered activations follows the flows.
          PlacedTransfer placed{g.add_delay(Seconds(0)), g.add_delay(Seconds(pp_gather_s))};
          for (const auto& pair : pairs) {
            comm::CollectiveRequest req;
            req.op = comm::Op::sendrecv;
            req.size = pp_bytes;
            req.dtype = dtype;
            req.engine = comm::Engine::flow;
            const comm::Communicator& comm = cache.communicator(pair);
            const long sender_gpu = back ? pair[1] : pair[0];
            req.sender = comm.gpu_of(0) == sender_gpu ? 0 : 1;
            const auto c = comm::add_collective(g, comm, req);
            g.add_dependency(placed.entry, c.entry);
            g.add_dependency(c.exit, placed.exit);
          }
          return placed;
        });
    const auto run = run_pipeline(graph, cache.communicator(pp_boundaries->slowest.front()).capacity(), false);
    out.breakdown.pp_p2p_s = std::max(0.0, run.makespan_s - run.compute_s - pcost.bubble_s);
  }
  if (o.record_timeline) {
    // The representative stage's streams, after the pipeline's fill and before its drain (half
    // the bubble each)...
    const double fill = out.breakdown.pp_bubble_s / 2;
    for (auto e : s.events) {
      e.start_s += fill;
      out.timeline.push_back(std::move(e));
    }
    if (fill > 0) {
      out.timeline.push_back({kComputeTrack, "pipeline fill (idle)", 0, fill});
      out.timeline.push_back({kComputeTrack, "pipeline drain (idle)", fill + s.step_s, fill});
    }
    // ...and every stage's forwards, backwards and sends in the schedule's own order, each send
    // at the time the closed form gives it.
    if (l.pp > 1) {
      const auto graph = build_pipeline(pipe, chunk_forward, chunk_backward, fixed_transfers(pp_p2p_s));
      const std::vector<double> no_links;
      for (auto& e : run_pipeline(graph, no_links, true).events) out.timeline.push_back(std::move(e));
    }
  }
  out.step_s = s.step_s + out.breakdown.pp_bubble_s + out.breakdown.pp_p2p_s;
  if (o.input) {
    // Each data-parallel replica loads its own samples on the node of its first GPU (Megatron
    // loads on TP rank 0 of the first stage and broadcasts): the busiest node's share against
    // the rate its pipeline's loading stages sustain together.
    double rate = std::numeric_limits<double>::infinity();
    std::string limit;
    for (const auto& st : o.input->stages) {
      if (st.name == "GPU compute" || !(st.loaded > 0)) continue;
      if (st.loaded < rate) {
        rate = st.loaded;
        limit = st.name;
      }
    }
    std::map<long, long> replicas;
    long busiest = 0;
    for (const long g : on_gpus(group_of(l, o.order, Axis::dp, 0), o.placement))
      busiest = std::max(busiest, ++replicas[g / t.gpus_per_node()]);
    const double per_node = static_cast<double>(global) / static_cast<double>(l.dp) * static_cast<double>(busiest);
    const double load_s = std::isfinite(rate) ? per_node / rate : 0.0;
    out.breakdown.data_stall_s = o.input->overlapped ? std::max(0.0, load_s - out.step_s) : load_s;
    if (o.record_timeline && out.breakdown.data_stall_s > 0)
      out.timeline.push_back({kComputeTrack, "waiting for input (data stall)", out.step_s, out.breakdown.data_stall_s});
    out.step_s += out.breakdown.data_stall_s;
    out.assumptions.push_back(fmt::format(
        "input {}: each node's pipeline loads {:.4g} samples/s ({} limits it){}; the busiest node feeds {} "
        "data-parallel replica{} of {:.4g} samples a step",
        o.input_name.empty() ? std::string("pipeline") : o.input_name, rate, limit.empty() ? "nothing" : limit,
        o.input->overlapped ? ", prefetching beside the step" : ", one stage after another, not beside the step",
        busiest, busiest == 1 ? "" : "s", static_cast<double>(global) / static_cast<double>(l.dp)));
  }
  out.breakdown.compute_s =
      s.compute_s - out.breakdown.optimizer_s - out.breakdown.tp_s - out.breakdown.cp_s - out.breakdown.ep_s;
  out.breakdown.dp_exposed_s = s.exposed_s;
  out.breakdown.sm_contention_s = s.sm_contention_s;
  out.dp_communication_s = s.communication_s;

  const double samples = static_cast<double>(global);
  out.samples_per_s = samples / out.step_s;
  out.tokens_per_s = m.is_transformer() ? out.samples_per_s * static_cast<double>(m.seq) : 0;
  // Model FLOPs: the standard 6N + attention per token (model_size.hpp); hardware adds the
  // recomputation.
  const TokenFlops per_token = training_flops(m, o.memory.recompute);
  const double per_sample_model = m.is_transformer() ? per_token.model * static_cast<double>(m.seq) : per_token.model;
  const double per_sample_hw =
      m.is_transformer() ? per_token.hardware * static_cast<double>(m.seq) : per_token.hardware;
  out.model_tflops_per_gpu = per_sample_model * out.samples_per_s / static_cast<double>(gpus) / 1e12;
  out.hardware_tflops_per_gpu = per_sample_hw * out.samples_per_s / static_cast<double>(gpus) / 1e12;
  const double peak = peak_flops(ctx) / 1e12;
  out.mfu = out.model_tflops_per_gpu / peak;
  out.hfu = out.hardware_tflops_per_gpu / peak;

  // The bottleneck in one sentence: the largest share of the step, except that an input
  // pipeline loading beside the step which still makes the GPUs wait sets the throughput by
  // itself (the step is its load time), whatever share the wait is.
  const double step = out.step_s;
  const auto& b = out.breakdown;
  const bool input_sets_pace = o.input && o.input->overlapped && b.data_stall_s > 0.01 * step;
  if (input_sets_pace || b.data_stall_s >= std::max({b.compute_s, b.tp_s, b.ep_s, b.cp_s, b.dp_exposed_s}))
    out.bottleneck =
        fmt::format("input pipeline: the GPUs wait {:.0f}% of the step for data", 100 * b.data_stall_s / step);
  else if (b.dp_exposed_s >= std::max({b.compute_s, b.tp_s, b.ep_s, b.cp_s}))
    out.bottleneck = fmt::format(
        "gradient synchronisation: {:.0f}% of the step waits for the data-parallel "
        "{} across {} GPUs",
        100 * b.dp_exposed_s / step, sharded || full_shard ? "reduce-scatter" : "all-reduce", l.dp * l.cp);
  else if (b.tp_s >= std::max({b.compute_s, b.ep_s, b.cp_s}))
    out.bottleneck = fmt::format("tensor-parallel collectives: {:.0f}% of the step, TP {} over {}", 100 * b.tp_s / step,
                                 l.tp, tp_group == nullptr ? std::string("-") : tp_group->transport_summary().front());
  else if (b.ep_s >= std::max(b.compute_s, b.cp_s))
    out.bottleneck = fmt::format("expert all-to-all: {:.0f}% of the step, EP {}", 100 * b.ep_s / step, l.ep);
  else if (b.cp_s >= b.compute_s)
    out.bottleneck =
        fmt::format("context-parallel exchange: {:.0f}% of the step beyond the attention it overlaps, CP {}",
                    100 * b.cp_s / step, l.cp);
  else
    out.bottleneck = fmt::format("compute: {:.0f}% of the step ({:.0f}% MFU); communication exposes {:.0f}%",
                                 100 * b.compute_s / step, 100 * out.mfu,
                                 100 * (b.tp_s + b.dp_exposed_s + b.ep_s + b.cp_s + b.pp_p2p_s) / step);
  for (const auto& a : eff.assumptions())
    if (a.rfind("attention on GPUs without", 0) != 0 || !eff.has_attention_figures(t.gpu_spec()))
      out.assumptions.push_back(a);
  if (l.tp > 1 && (tp_overlap || !l.tp_comm_overlap))
    out.assumptions.push_back(
        tp_overlap ? "TP all-gathers and reduce-scatters run under the GEMM each feeds or drains as Transformer "
                     "Engine's userbuffers split them (ring exchange by copy engine; reduce-scatter in 4 chunks "
                     "on 16 SMs kept from the GEMM): the last chunk's scatter, what outlasts a chunk, and the "
                     "SMs and kernels the split costs are in the critical path"
                   : "TP collectives are timed alone, in the critical path (no overlap with compute)");
  return out;
}

}  // namespace gf::work
