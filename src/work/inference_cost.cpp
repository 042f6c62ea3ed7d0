#include "work/inference_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "comm/model.hpp"
#include "core/error.hpp"
#include "work/layer_cost.hpp"
#include "work/mig_profile.hpp"
#include "work/model_size.hpp"

namespace gf::work {

const char* to_string(WeightFormat f) { return name_of(kWeightFormatNames, f); }

bool parse_weight_format(const std::string& s, WeightFormat& out) {
  const auto f = parse_name(kWeightFormatNames, s);
  if (f) out = *f;
  return f.has_value();
}

double weight_bytes(WeightFormat f) {
  switch (f) {
    case WeightFormat::fp16:
    case WeightFormat::bf16: return 2.0;
    case WeightFormat::fp8: return 1.0;
    case WeightFormat::fp4: return 0.5 + 1.0 / 16;    // NVFP4: an fp8 scale per 16 values
    case WeightFormat::int4: return 0.5 + 2.0 / 128;  // a 16-bit scale per group of 128
  }
  return 2.0;
}

namespace {

constexpr double kGiB = 1073741824.0;

double tflops(const hw::GpuSpec& g, const char* key) {
  const auto it = g.tflops_dense.find(key);
  return it == g.tflops_dense.end() ? 0.0 : it->second * 1e12;
}

// Time split by what limits it; `add` prices one kernel as a roofline plus its fixed cost.
struct Split {
  double compute = 0;
  double memory = 0;
  double add(double math_s, double bytes_s, double fixed_s) {
    const double t = fixed_s + std::max(math_s, bytes_s);
    (math_s >= bytes_s ? compute : memory) += t;
    return t;
  }
  void accumulate(const Split& s, double times) {
    compute += s.compute * times;
    memory += s.memory * times;
  }
};

}  // namespace

InferenceCost::InferenceCost(TrainingContext& context, const ModelSpec& m, const ReplicaSpec& r, std::vector<long> gpus)
    : cache_(context), m_(m), r_(r), gpus_(std::move(gpus)), gpu_(context.topology().gpu_spec()) {
  if (!m.is_transformer())
    throw InputError({}, "--model", m.name + " is not a transformer", "a transformer from `gpufabric train --list`");
  if (r.tp < 1 || r.pp < 1 || r.ep < 1)
    throw InputError({}, "--tp", fmt::format("TP {} PP {} EP {}", r.tp, r.pp, r.ep), "sizes of at least 1");
  if (m.heads % r.tp != 0)
    throw InputError({}, "--tp", fmt::format("TP {} does not divide the {} heads of {}", r.tp, m.heads, m.name),
                     "a TP size dividing the attention heads");
  if (r.pp > m.layers)
    throw InputError({}, "--pp", fmt::format("PP {} is more stages than the {} layers of {}", r.pp, m.layers, m.name),
                     fmt::format("at most {}", m.layers));
  if (r.ep > 1 && (!m.moe || r.tp % r.ep != 0 || m.moe->experts % r.ep != 0))
    throw InputError({}, "--ep", fmt::format("EP {} with TP {} on {}", r.ep, r.tp, m.name),
                     "an EP size dividing TP and the experts of an MoE model");
  if (static_cast<long>(gpus_.size()) != r.gpus())
    throw InputError(
        {}, "--tp", fmt::format("a replica of TP {} x PP {} needs {} GPUs, got {}", r.tp, r.pp, r.gpus(), gpus_.size()),
        "as many GPUs as TP x PP");
  const auto& eff = ComputeEfficiency::builtin();
  peak_16_ = tflops(gpu_, "bf16") > 0 ? tflops(gpu_, "bf16") : tflops(gpu_, "fp16");
  Precision ceiling_precision = Precision::bf16;
  switch (r.weights) {
    case WeightFormat::fp16:
    case WeightFormat::bf16:
    case WeightFormat::int4: peak_ = peak_16_; break;  // int4 is weight-only: the GEMM runs in 16 bits
    case WeightFormat::fp8:
      peak_ = tflops(gpu_, "fp8");
      ceiling_precision = Precision::fp8;
      break;
    case WeightFormat::fp4:
      peak_ = tflops(gpu_, "fp4");
      ceiling_precision = Precision::fp8;
      assumptions_.emplace_back("fp4 GEMMs reach the fp8 GEMMs' fraction of the fp4 peak (no fp4 figure cited)");
      break;
  }
  if (!(peak_ > 0))
    throw InputError({}, "--precision", fmt::format("the {} has no {} tensor cores", gpu_.name, to_string(r.weights)),
                     "fp8 on Ada, Hopper and later; fp4 on Blackwell; fp16, bf16 or int4 anywhere");
  if (r.kv == WeightFormat::fp4 || r.kv == WeightFormat::int4)
    throw InputError({}, "--kv-dtype", std::string("got ") + to_string(r.kv), "fp16, bf16 or fp8");
  if (r.kv == WeightFormat::fp8 && !(tflops(gpu_, "fp8") > 0))
    throw InputError({}, "--kv-dtype", fmt::format("the {} has no fp8 support", gpu_.name), "fp16 or bf16");
  if (!(r.gpu_memory_utilization > 0 && r.gpu_memory_utilization <= 1) || r.kv_free_fraction < 0 ||
      r.kv_free_fraction > 1)
    throw InputError({}, "--gpu-memory-utilization", fmt::format("{}", r.gpu_memory_utilization),
                     "a fraction in (0, 1]");
  const GemmModel g = eff.gemm(gpu_, ceiling_precision);
  ceiling_ = g.ceiling;
  fixed_ = g.fixed_s;
  sms_ = eff.sm_count(gpu_);
  hbm_ = gpu_.memory_bandwidth.value() * eff.memory_fraction();
  double memory = gpu_.memory.value();
  if (!r.mig.empty()) {
    if (r.tp != 1 || r.pp != 1 || r.ep != 1)
      throw InputError({}, "--mig", fmt::format("TP {} x PP {} on MIG instances", r.tp, r.pp),
                       "TP 1 and PP 1 (NCCL does not run collectives across MIG instances)");
    const MigProfile mig = mig_profile(gpu_, r.mig);
    // A slice runs the same kernels on its own SMs (as `nvidia-smi mig -lgip` counts them, so
    // GEMM waves quantize on them) and fewer memory channels.
    const int gpu_sms = sms_;
    // Without the whole GPU's SM count, the guide's fraction of the SMs stands in.
    const double sm_share =
        gpu_sms > 0 ? static_cast<double>(mig.sms) / static_cast<double>(gpu_sms) : mig.compute_fraction;
    peak_ *= sm_share;
    peak_16_ *= sm_share;
    sms_ = mig.sms;
    hbm_ *= mig.memory_fraction;
    memory = mig.memory_bytes;
    assumptions_.push_back(fmt::format(
        "MIG {}: {} of the {}'s {} SMs{} and {:.0f}% of the memory bandwidth, {:.2f} GiB, {} per GPU (nvidia-smi "
        "mig -lgip; NVIDIA's MIG User Guide)",
        mig.name, mig.sms, gpu_.name, gpu_sms, mig.estimated ? " (estimated)" : "", 100 * mig.memory_fraction,
        mig.memory_bytes / kGiB, mig.max_instances));
  }

  // Memory per GPU. Embedding and output projection stay in 16 bits (serving engines quantize
  // the blocks' linear layers), split over TP as vocabulary-parallel layers are; the first and
  // last stages hold them, so the busier of the two counts.
  const ParameterCount p = count_parameters(m);
  attention_params_ = p.attention;
  const double tp = static_cast<double>(r.tp);
  stage_layers_ = (m.layers + r.pp - 1) / r.pp;
  const double blocks = p.total - p.embedding - p.output;
  const double stage_blocks = blocks * static_cast<double>(stage_layers_) / static_cast<double>(m.layers);
  const double ends = r.pp == 1 ? p.embedding + p.output : std::max(p.embedding, p.output);
  weights_per_gpu_ = stage_blocks * weight_bytes(r.weights) / tp + ends * 2.0 / tp;
  const double kv_b = weight_bytes(r.kv);
  if (m.mla) {
    // MLA caches the compressed latent and the shared rotary key, the same on every TP rank.
    kv_per_token_ =
        static_cast<double>(m.mla->kv_lora_rank + m.mla->qk_rope_head_dim) * kv_b * static_cast<double>(stage_layers_);
  } else {
    // K and V of this rank's KV heads; GQA heads fewer than TP ranks are replicated.
    const double heads_here = std::ceil(static_cast<double>(m.kv_heads) / tp);
    kv_per_token_ = 2 * heads_here * static_cast<double>(m.head_dim) * kv_b * static_cast<double>(stage_layers_);
  }
  // Activations of the largest batch the engine profiles (vLLM's profile run at
  // max_num_batched_tokens): hidden states and the FFN's widest tensor in 16 bits, double
  // buffered, and fp32 logits for the sequences sampled.
  const double widest =
      std::max({static_cast<double>(m.hidden) * 4, static_cast<double>(m.ffn) * (m.gated_ffn ? 2.0 : 1.0) / tp,
                m.moe ? static_cast<double>(m.moe->expert_ffn) * 2.0 * m.moe->top_k / tp : 0.0});
  activations_ = static_cast<double>(r.max_batch_tokens) * widest * 2.0 * 2 +
                 static_cast<double>(r.max_seqs) * static_cast<double>(m.vocab) / tp * 4.0;
  const double budget = r.kv_free_fraction > 0 ? memory : memory * r.gpu_memory_utilization;
  kv_capacity_ = budget - weights_per_gpu_ - activations_;
  if (r.kv_free_fraction > 0) kv_capacity_ *= r.kv_free_fraction;
  // A replica needs room for at least one full-length request; 16 blocks of 16 tokens is the floor.
  if (!(kv_capacity_ > 256 * kv_per_token_)) {
    const double per_gpu_16 = blocks * weight_bytes(r.weights) + (p.embedding + p.output) * 2.0;
    const long need =
        static_cast<long>(std::ceil(per_gpu_16 / std::max(1.0, budget - activations_ - 256 * kv_per_token_)));
    throw InputError(
        {}, "--tp",
        fmt::format("{} in {} needs {:.1f} GiB of weights and {:.1f} GiB of activations per GPU at TP {} x PP {}; "
                    "{:.0f}% of the {}'s {:.0f} GiB leaves {:.1f} GiB for the KV cache",
                    m.name, to_string(r.weights), weights_per_gpu_ / kGiB, activations_ / kGiB, r.tp, r.pp,
                    100 * r.gpu_memory_utilization, r.mig.empty() ? gpu_.name : gpu_.name + " " + r.mig + " instance",
                    memory / kGiB, std::max(0.0, kv_capacity_) / kGiB),
        fmt::format("TP x PP of at least {}, a smaller weight format (fp8, int4), or GPUs with more memory", need));
  }
  kv_tokens_ = static_cast<long>(kv_capacity_ / kv_per_token_);

  // Collectives on a grid of token counts, each priced once as a CUDA-graph launch (engines
  // capture decode in graphs; prefill's larger messages hardly notice the launch).
  const double h = static_cast<double>(m.hidden);
  const std::vector<long> tp_group(gpus_.begin(), gpus_.begin() + r.tp);
  const std::vector<long> ep_group(gpus_.begin(), gpus_.begin() + r.ep);
  const std::vector<long> stages = {gpus_[0], gpus_[static_cast<std::size_t>(r.tp % r.gpus())]};
  for (double x = 1; x <= static_cast<double>(std::max<long>(r.max_batch_tokens, r.max_seqs)) * 2;
       x *= std::sqrt(2.0)) {
    const double t = std::round(x);
    if (r.tp > 1)
      allreduce_.add(t, cache_.collective(tp_group, comm::Op::all_reduce, t * h * 2.0, "bfloat16", true).time.value());
    if (r.ep > 1) {
      const double bytes = t * static_cast<double>(m.moe->top_k) * h * 2.0;
      alltoall_.add(t, cache_.collective(ep_group, comm::Op::alltoall, bytes, "bfloat16", true).time.value());
    }
    if (r.pp > 1)
      sendrecv_.add(t, cache_.collective(stages, comm::Op::sendrecv, t * h * 2.0 / tp, "bfloat16", true).time.value());
  }
  for (int i = 0; i <= 24; ++i) {
    const long keys = 1L << i;
    attention_eff_.push_back(
        std::max(0.05, eff.attention(gpu_, Precision::bf16, std::max<long>(keys, 128), m.head_dim, true, false)));
  }

  assumptions_.emplace_back("no scheduler or launch gap between iterations (CUDA graphs, asynchronous scheduling)");
  assumptions_.push_back(fmt::format(
      "memory-bound kernels reach {:.0f}% of HBM bandwidth; decode attention reads the KV cache at that rate",
      100 * eff.memory_fraction()));
  if (r.tp > 1)
    assumptions_.emplace_back(
        "TP all-reduces priced as NCCL's choice launched from a CUDA graph (vLLM's and "
        "TensorRT-LLM's custom all-reduce kernels are of the same order for small messages)");
  if (m.moe)
    assumptions_.emplace_back("MoE: the batch reads the weights of the experts its tokens touch (uniform routing)");
}

std::string InferenceCost::describe() const {
  if (!r_.mig.empty())
    return fmt::format("MIG {} on {}: weights {:.1f} GiB ({}), KV cache {:.1f} GiB = {} tokens ({})", r_.mig, gpu_.name,
                       weights_per_gpu_ / kGiB, to_string(r_.weights), kv_capacity_ / kGiB, kv_tokens_,
                       to_string(r_.kv));
  return fmt::format("TP {}{} on {}: weights {:.1f} GiB/GPU ({}), KV cache {:.1f} GiB/GPU = {} tokens ({})", r_.tp,
                     r_.pp > 1 ? fmt::format(" x PP {}", r_.pp) : std::string(), gpu_.name, weights_per_gpu_ / kGiB,
                     to_string(r_.weights), kv_capacity_ / kGiB, kv_tokens_, to_string(r_.kv));
}

double InferenceCost::attention_efficiency(double keys) const {
  const double l = std::clamp(std::log2(std::max(1.0, keys)), 0.0, 24.0);
  const auto i = static_cast<std::size_t>(l);
  if (i + 1 >= attention_eff_.size()) return attention_eff_.back();
  return attention_eff_[i] + (attention_eff_[i + 1] - attention_eff_[i]) * (l - static_cast<double>(i));
}

IterationTime InferenceCost::iteration(const IterationWork& w) {
  IterationTime out;
  const double tokens = static_cast<double>(w.prefill_tokens + w.decode_sequences);
  if (tokens <= 0) return out;
  const double tp = static_cast<double>(r_.tp);
  const double h = static_cast<double>(m_.hidden);
  const double rate = peak_ * ceiling_;
  const double wb = weight_bytes(r_.weights);
  // A linear layer of n x k weights (this rank's share) on every token of the batch.
  // Tile and wave quantization of each GEMM over the GPU's (or MIG slice's) SMs (layer_cost.hpp).
  auto quantization = [&](double m, double n, double groups) { return gemm_quantization(m, n, groups, sms_); };
  auto linear = [&](Split& s, double n, double k) {
    s.add(2 * tokens * n * k / rate * quantization(tokens, n, 1), (n * k * wb + tokens * (n + k) * 2.0) / hbm_, fixed_);
  };
  auto elementwise = [&](Split& s, double bytes, double kernels) { s.add(0, bytes / hbm_, kernels * fixed_); };

  // One layer's attention: projections, the attention itself, norms and residuals.
  Split attention;
  if (m_.mla) {
    const double params = attention_params_ / tp;
    attention.add(2 * tokens * params / rate, (params * wb + tokens * 4 * h * 2.0) / hbm_, 2 * fixed_);
  } else {
    const double q = static_cast<double>(m_.attention_width());
    const double kv = static_cast<double>(m_.kv_heads * m_.head_dim);
    linear(attention, (q + 2 * kv) / tp, h);
    linear(attention, h, q / tp);
  }
  const double heads = static_cast<double>(m_.heads) / tp;
  const double dim =
      m_.mla ? static_cast<double>(m_.mla->kv_lora_rank + m_.mla->qk_rope_head_dim) : static_cast<double>(m_.head_dim);
  const double kv_layer = kv_per_token_ / static_cast<double>(stage_layers_);
  if (w.prefill_tokens > 0) {
    const double keys = w.prefill_attention / static_cast<double>(w.prefill_tokens);
    attention.add(4 * heads * dim * w.prefill_attention / (peak_16_ * attention_efficiency(keys)),
                  static_cast<double>(w.prefill_tokens) * kv_layer * 2 / hbm_, fixed_);
  }
  // Each decode token reads its request's whole KV cache: bound by HBM at any batch.
  if (w.decode_sequences > 0)
    attention.add(4 * heads * dim * w.decode_context / peak_16_, w.decode_context * kv_layer / hbm_, fixed_);
  // Two fused residual-add + norm passes, rotary embedding.
  elementwise(attention, tokens * h / tp * 2.0 * 6, 3);

  Split dense;
  auto ffn = [&](Split& s, double width) {
    linear(s, width * (m_.gated_ffn ? 2.0 : 1.0) / tp, h);
    linear(s, h, width / tp);
    elementwise(s, tokens * width / tp * 2.0 * 3, 1);
  };
  if (m_.ffn > 0) ffn(dense, static_cast<double>(m_.ffn));

  Split moe;
  if (m_.moe) {
    const auto& x = *m_.moe;
    const double experts = static_cast<double>(x.experts);
    const double per_expert = (m_.gated_ffn ? 3.0 : 2.0) * h * static_cast<double>(x.expert_ffn);
    // The experts this batch touches: each token picks top-k of E.
    const double touched = experts * (1 - std::pow(1 - static_cast<double>(x.top_k) / experts, tokens));
    linear(moe, experts / tp, h);  // router
    // The routed tokens spread evenly over the experts touched; each expert's GEMMs are tiled
    // on their own (the expert FFN's up projection stands for the shape).
    const double per_expert_tokens = tokens * x.top_k / std::max(1.0, touched);
    const double up_width = static_cast<double>(x.expert_ffn) * (m_.gated_ffn ? 2.0 : 1.0) / tp;
    moe.add(2 * tokens * x.top_k * per_expert / tp / rate * quantization(per_expert_tokens, up_width, touched),
            (touched * per_expert / tp * wb + tokens * x.top_k * h * 2.0 * 2) / hbm_, 2 * fixed_);
    // The kernels around the grouped GEMMs, each a pass over HBM: permuting the tokens into
    // expert order (k copies of each), the gated activation on the expert intermediate, and
    // un-permuting with the top-k weighted sum.
    const double routed = tokens * x.top_k;
    elementwise(moe, (tokens + routed) * h * 2.0 + routed * up_width * 2.0 * 1.5 + (routed + tokens) * h * 2.0, 3);
    if (x.shared_experts > 0) ffn(moe, static_cast<double>(x.shared_experts * x.expert_ffn));
  }

  // Embedding lookup, and logits (vocabulary-parallel over TP) for the sequences that sample.
  Split ends;
  elementwise(ends, tokens * h * 2.0, 1);
  const double sampled = static_cast<double>(w.decode_sequences + w.prefill_sequences);
  if (sampled > 0) {
    const double vocab = static_cast<double>(m_.vocab) / tp;
    ends.add(2 * sampled * vocab * h / (peak_16_ * ceiling_), (vocab * h * 2.0 + sampled * vocab * 4.0) / hbm_, fixed_);
  }

  const double layers = static_cast<double>(m_.layers);
  const double moe_layers = m_.moe ? static_cast<double>(m_.layers - m_.moe->dense_layers) : 0.0;
  Split total;
  total.accumulate(attention, layers);
  total.accumulate(dense, layers - moe_layers);
  total.accumulate(moe, moe_layers);
  total.accumulate(ends, 1);
  out.compute = total.compute;
  out.memory = total.memory;
  out.communication = layers * 2 * allreduce_.at(tokens) + moe_layers * 2 * alltoall_.at(tokens) +
                      static_cast<double>(r_.pp - 1) * sendrecv_.at(tokens);
  out.seconds = out.compute + out.memory + out.communication;
  return out;
}

}  // namespace gf::work
