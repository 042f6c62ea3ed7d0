#include "work/training_memory.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "work/pipeline_split.hpp"

namespace gf::work {

const char* to_string(Kernels k) { return name_of(kKernelsNames, k); }

const char* to_string(Precision p) { return name_of(kPrecisionNames, p); }

const char* to_string(Sharding s) {
  switch (s) {
    case Sharding::none: return "none";
    case Sharding::zero1: return "zero-1";
    case Sharding::zero2: return "zero-2";
    case Sharding::zero3: return "zero-3";
    case Sharding::fsdp_full: return "fsdp full";
    case Sharding::fsdp_grad_op: return "fsdp grad-op";
    case Sharding::fsdp_hybrid: return "fsdp hybrid";
  }
  return "?";
}

namespace {

double d(long v) { return static_cast<double>(v); }

// Bytes per parameter held, split as weights / gradients / optimizer, with `shards` ranks
// sharing what the strategy shards.
struct PerParam {
  double weights = 0;
  double gradients = 0;
  double main_gradients = 0;
  double optimizer = 0;
  [[nodiscard]] double total() const { return weights + gradients + main_gradients + optimizer; }
};

PerParam per_param(const MemoryOptions& o, double shards) {
  // Megatron's table (docs, distributed optimizer): bf16 parameters with fp32 gradients hold
  // 2 + 4 + 12 = 18 bytes per parameter (6 + 12/d with the distributed optimizer): the 4 are the
  // fp32 main gradients it accumulates in. fp16 holds 2 + 2 + 16 = 20 (4 + 16/d): fp16 gradients,
  // and in the sharded 16 the fp32 copy of the gradients beside the master weights and moments.
  // fp32 holds 4 + 4 + 8 = 16 (8 + 8/d). DeepSpeed ZeRO counts 2 + 2 + 12 = 16 (Rajbhandari et al.
  // SC'20, Section 3): 16-bit gradients, no fp32 main gradients. fp8 training (Transformer Engine)
  // keeps bf16 weights as the master copy's working precision: counted as bf16.
  PerParam p;
  const bool fp32 = o.precision == Precision::fp32;
  const bool fp16 = o.precision == Precision::fp16;
  const bool zero = o.sharding != Sharding::none;
  p.weights = fp32 ? 4 : 2;
  if (fp32) {
    p.gradients = 4;
  } else if (zero || fp16) {
    p.gradients = 2;
  } else {
    p.main_gradients = 4;
  }
  p.optimizer = fp32 ? 8 : 12;
  // fp16's fp32 gradient copy lives with the optimizer state and is sharded with it.
  double sharded_main = fp16 && !zero ? 4 : 0;
  const double n = std::max(1.0, shards);
  switch (o.sharding) {
    case Sharding::none:
      if (o.distributed_optimizer) {
        p.optimizer /= n;
        sharded_main /= n;
      }
      break;
    case Sharding::zero1: p.optimizer /= n; break;
    case Sharding::zero2:
    case Sharding::fsdp_grad_op:
      p.optimizer /= n;
      p.gradients /= n;
      break;
    case Sharding::zero3:
    case Sharding::fsdp_full:
    case Sharding::fsdp_hybrid:
      p.optimizer /= n;
      p.gradients /= n;
      p.weights /= n;
      break;
  }
  p.main_gradients += sharded_main;
  return p;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const ParallelLayout& l, const MemoryOptions& o, bool moe_layer) {
  const double s = d(m.seq) / d(std::max<long>(1, l.cp));
  const double b = d(o.micro_batch);
  const double h = d(m.hidden);
  const double t = d(std::max<long>(1, l.tp));
  const double sbh = s * b * h;
  // 16-bit activations (fp32 training stores 4 bytes: twice every term).
  const double width = o.precision == Precision::fp32 ? 2.0 : 1.0;
  if (o.recompute == Recompute::full) {
    // Only each layer's input is kept; the rest is recomputed in the backward pass.
    return width * 2 * sbh / (l.sequence_parallel ? t : 1.0);
  }
  const double q = d(m.attention_width());
  const double kv = d(m.kv_heads * m.head_dim);
  // What tensor parallelism leaves whole on every rank unless sequence parallelism splits it:
  // the two norms' inputs (4 sbh), the QKV and FC1 inputs (2 sbh each) and the two dropout
  // masks (1 sbh each).
  const double replicated = 10 * sbh;
  // Split over TP: Q and K for the scores, V, the output projection's input; the scores,
  // softmax and dropout over them (5 a s^2 b) unless FlashAttention or selective recomputation
  // leaves them out.
  double attention = 2 * s * b * q + 2 * s * b * kv + 2 * s * b * kv + 2 * s * b * q;
  // (torchtitan's per-op policy also recomputes the element-wise kernels; the matmul outputs it
  // drops are counted here as kept, which overstates its activations a little.)
  if (o.attention == Attention::unfused && o.recompute != Recompute::selective &&
      o.recompute != Recompute::selective_op)
    attention += 5 * d(m.heads) * s * s * b;
  // FFN: FC1's output(s), the activation's output (FC2's input).
  auto ffn = [&](long f, double tokens) {
    const double width_out = d(f) * (m.gated_ffn ? 2.0 : 1.0);
    return tokens * (2 * s * b * width_out + 2 * s * b * d(f));
  };
  double mlp = 0;
  if (moe_layer && m.moe) {
    // Every token goes through top-k experts (padded by the capacity factor) and the shared
    // ones; EP spreads the experts, not the tokens, so a rank holds the same share.
    const auto& e = *m.moe;
    mlp = ffn(e.expert_ffn, d(e.top_k) * e.capacity_factor + d(e.shared_experts));
  } else {
    mlp = ffn(m.ffn, 1.0);
  }
  const double split = attention + mlp;
  return width * (replicated / (l.sequence_parallel ? t : 1.0) + split / t);
}

MemoryBreakdown training_memory(const ModelSpec& m, const ParallelLayout& l, const MemoryOptions& o) {
  MemoryBreakdown out;
  const auto params = count_parameters(m);
  const double tp = d(l.tp);
  const double pp = d(l.pp);
  // Ranks that share the sharded states: DP (and CP, which Megatron's distributed optimizer
  // shards over too); FSDP hybrid shards inside a node only.
  double shards = d(l.dp * l.cp);
  if (o.sharding == Sharding::fsdp_hybrid)
    shards = std::min(shards, std::max(1.0, d(o.gpus_per_node) / (tp * d(l.cp))) * d(l.cp));
  const PerParam bytes = per_param(o, shards);
  out.bytes_per_param = bytes.total();

  if (!m.is_transformer()) {
    out.weights = params.total * bytes.weights;
    out.gradients = params.total * bytes.gradients;
    out.main_gradients = params.total * bytes.main_gradients;
    out.optimizer = params.total * bytes.optimizer;
    out.activations = m.activation_bytes_per_sample * d(o.micro_batch);
  } else {
    // Stage by stage: the layers as Megatron-Core splits them (pipeline_split.hpp; where the
    // layout is one it refuses, evenly, for the planner's estimate), the embedding on the first
    // stage and the output projection on the last (both split over TP by vocabulary).
    const auto request = split_request(m.layers, l);
    PipelineSplit split;
    if (pipeline_split_valid(request)) {
      split = pipeline_split(request);
    } else {
      split.pp = l.pp;
      for (long st = 0; st < l.pp; ++st)
        split.virtual_layers.push_back(
            std::min((m.layers + l.pp - 1) / l.pp, std::max<long>(0, m.layers - st * ((m.layers + l.pp - 1) / l.pp))));
    }
    const double ep = d(std::max<long>(1, l.ep)) * d(l.expert_tp()) / tp;  // experts over EP x ETP
    const auto by_stage = split.layers_by_stage();
    // Per stage: the parameters one GPU holds and one micro-batch's activations.
    std::vector<double> stage_params(static_cast<std::size_t>(l.pp)), stage_act(static_cast<std::size_t>(l.pp));
    for (long st = 0; st < l.pp; ++st) {
      double held = 0;
      double act = 0;
      for (const long layer : by_stage[static_cast<std::size_t>(st)]) {
        const bool moe = m.moe && layer >= m.moe->dense_layers;
        if (moe) {
          // Experts split over EP (then TP inside an expert), the rest over TP.
          const auto& e = *m.moe;
          const double expert_share = (params.moe_layer - params.attention) / (d(e.experts) + d(e.shared_experts));
          const double routed = d(e.experts) * expert_share / ep / tp;
          const double shared = d(e.shared_experts) * expert_share / tp;
          held += params.attention / tp + routed + shared;
        } else {
          held += params.per_layer / tp;
        }
        act += layer_activation_bytes(m, l, o, moe);
      }
      if (st == 0) held += params.embedding / tp;
      if (st == l.pp - 1) held += params.output / tp;
      stage_params[static_cast<std::size_t>(st)] = held;
      stage_act[static_cast<std::size_t>(st)] = act;
    }
    double worst = -1;
    for (long st = 0; st < l.pp; ++st) {
      const auto at = [&](const std::vector<double>& v, long s) { return v[static_cast<std::size_t>(s)]; };
      double held = at(stage_params, st);
      double act = at(stage_act, st);
      // Micro-batches the stage keeps in flight: 1F1B keeps (pp - stage) at most, and no more
      // than there are; the interleaved schedule keeps a bit more (Korthikanti et al.: a factor
      // 1 + (p - 1) / (p v) on the first stage).
      double in_flight = std::min(d(l.pp - st), d(o.micro_batches));
      if (l.vpp > 1) in_flight *= 1 + (pp - 1) / (pp * d(l.vpp));
      if (o.dualpipe && l.pp > 1) {
        // The rank also holds the mirror stage; PP + 1 micro-batches in flight, each half on
        // either stage (DeepSeek-V3 report, Table 2).
        const long mirror = l.pp - 1 - st;
        if (mirror != st) held += at(stage_params, mirror);
        act = (act + at(stage_act, mirror)) / 2;
        in_flight = std::min(pp + 1, d(o.micro_batches));
      }
      double activations = act * in_flight;
      const double width = o.precision == Precision::fp32 ? 2.0 : 1.0;
      const double sbh = d(m.seq) / d(l.cp) * d(o.micro_batch) * d(m.hidden);
      if (st == l.pp - 1 || (o.dualpipe && st == 0)) {
        // Logits, fp32 for the vocabulary-parallel cross-entropy, for the micro-batch in flight.
        activations += 4 * d(m.seq) / d(l.cp) * d(o.micro_batch) * d(m.vocab) / tp * o.head_token_fraction;
      }
      if (st == 0 || (o.dualpipe && st == l.pp - 1))
        activations += width * 2 * sbh / (l.sequence_parallel ? tp : 1.0) * in_flight;  // embedding output
      const double state = held * bytes.total();
      if (state + activations > worst) {
        worst = state + activations;
        out.stage = st;
        out.weights = held * bytes.weights;
        out.gradients = held * bytes.gradients;
        out.main_gradients = held * bytes.main_gradients;
        out.optimizer = held * bytes.optimizer;
        out.activations = activations;
      }
    }
  }
  // Communication buffers: NCCL's receive buffers for each communicator this rank is in (one per
  // parallel dimension larger than 1), and the framework's staging: DDP and Megatron reduce
  // gradients through buckets, FSDP gathers one layer's weights ahead: two buckets' worth.
  double nccl = 0;
  for (const long group : {l.dp * l.cp, l.tp, l.pp, l.cp, l.ep}) nccl += nccl_buffer_bytes(group, o.nccl_channels);
  out.nccl_buffers = nccl;
  out.buffers = nccl + 2 * o.bucket_bytes;
  const double rest = out.weights + out.gradients + out.main_gradients + out.optimizer + out.activations + out.buffers;
  out.fragmentation = rest * o.fragmentation;
  out.total = rest + out.fragmentation;
  out.assumptions.push_back(fmt::format(
      "memory: PyTorch's caching allocator leaves {:.0f}% of the rest unusable (an assumption: no published rule "
      "gives one fraction; STWeaver, arXiv 2507.16274, finds the default allocator wasting up to 43% with virtual "
      "pipelines and recomputation); NCCL buffers {:.0f} MiB: {} channels x (Simple 4 MiB + LL 512 KiB + LL128 4.7 "
      "MB) per communicator (NCCL src/init.cc defaults)",
      o.fragmentation * 100, nccl / (1024.0 * 1024), o.nccl_channels));
  out.assumptions.push_back("activations as Korthikanti et al. 2022 (dropout masks kept), 16-bit unless fp32");
  if (o.dualpipe && l.pp > 1)
    out.assumptions.push_back(
        "DualPipe: each GPU holds its stage and the mirror stage (2x parameters, with their gradients and optimizer "
        "states) and PP + 1 micro-batches' activations, DeepSeek-V3 report Table 2");
  return out;
}

}  // namespace gf::work
