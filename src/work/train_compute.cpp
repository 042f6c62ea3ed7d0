#include "work/train_compute.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "work/flag_refusal.hpp"
#include "work/pointwise_traffic.hpp"

namespace gf::work {

ComputeRates compute_rates(const ComputeRatesRequest& r) {
  ComputeContext base{r.gpu, r.precision, ComputeEfficiency::builtin()};
  std::vector<std::string> assumptions;
  if (r.gemm_tflops > 0) {
    const double fraction = r.gemm_tflops * 1e12 / peak_flops(base);
    refuse_if(!(fraction <= 1.05), "--compute-profile",
              fmt::format("{:.0f} TFLOP/s measured is above the {}'s {} peak of {:.0f}", r.gemm_tflops, r.gpu.name,
                          to_string(r.precision), peak_flops(base) / 1e12),
              "a profile measured on this cluster's GPU");
    base.gemm_ceiling = std::min(1.0, fraction);
    assumptions.push_back(fmt::format("GEMMs at {:.0f} TFLOP/s ({:.0f}% of peak) as measured: {}", r.gemm_tflops,
                                      100 * base.gemm_ceiling, r.gemm_source));
  }
  // Layers pay the per-kernel device floor and the host's enqueue interval (kernel_launch.hpp).
  base.launch = &KernelLaunch::builtin();
  return {resolve_rates(base), std::move(assumptions)};
}

TransformerCosts transformer_costs(const TransformerCostsRequest& r) {
  const ModelSpec& m = r.model;
  const ParallelLayout& l = r.layout;
  const MemoryOptions& mem = r.memory;
  const ComputeContext& ctx = r.context;
  TransformerCosts out;
  out.tokens = static_cast<double>(mem.micro_batch * m.seq) / static_cast<double>(l.cp);
  const double h = static_cast<double>(m.hidden);
  out.dense = transformer_layer_cost(m, l, mem, ctx, false);
  out.expert = m.moe ? transformer_layer_cost(m, l, mem, ctx, true) : out.dense;
  // Embedding lookup is memory work; the output projection a GEMM over the vocabulary, and the
  // loss over its logits memory-bound (pointwise_traffic.hpp).
  const double vocab_here = static_cast<double>(m.vocab) / static_cast<double>(l.tp);
  const LossBytes loss = cross_entropy_bytes(mem.precision, mem.kernels, mem.cross_entropy_fusion);
  const double head_tokens = out.tokens * mem.head_token_fraction;
  const double head_gemm = gemm_seconds(ctx, head_tokens, vocab_here, h);
  out.head_forward_s = head_gemm + memory_seconds(ctx, head_tokens * vocab_here * loss.forward);
  out.head_backward_s = 2 * head_gemm + memory_seconds(ctx, head_tokens * vocab_here * loss.backward);
  out.embedding_s = memory_seconds(ctx, out.tokens * h * 2);
  return out;
}

double optimizer_seconds(const ComputeContext& c, const MemoryOptions& memory, const ParallelLayout& l, double params) {
  const double shards =
      memory.sharding != Sharding::none || memory.distributed_optimizer ? static_cast<double>(l.dp * l.cp) : 1.0;
  return memory_seconds(c, params * 30 / shards);
}

}  // namespace gf::work
