#include "work/moe_gemm.hpp"

#include <algorithm>

namespace gf::work {

double grouped_gemm_seconds(const ComputeContext& c, double groups, double m, double n, double k) {
  if (groups <= 0 || m <= 0 || n <= 0 || k <= 0) return 0;
  if (!c.resolved) return grouped_gemm_seconds(resolve_rates(c), groups, m, n, k);
  const double e = c.precision == Precision::fp32 ? 4.0 : 2.0;
  const double flops = 2 * groups * m * n * k;
  // Every expert's weights are read once; its tokens in and out.
  const double bytes = groups * (m * k + k * n + m * n) * e;
  const double math = flops * gemm_quantization(m, n, groups, c.sms) / (c.peak * c.ceiling);
  const double memory = bytes / (c.gpu.memory_bandwidth.value() * c.efficiency.memory_fraction());
  return c.fixed_s + std::max(math, memory);
}

ExpertGemmShape expert_gemm_shape(const ModelSpec& m, const ParallelLayout& l, double dispatched) {
  ExpertGemmShape s;
  if (!m.moe) return s;
  const auto& x = *m.moe;
  const double ep = static_cast<double>(std::max<long>(1, l.ep));
  const double etp = static_cast<double>(l.expert_tp());
  s.groups = static_cast<double>(x.experts) / ep;
  const double gathered = l.sequence_parallel ? etp : 1.0;
  s.tokens = ep * gathered * dispatched * x.top_k * x.capacity_factor / static_cast<double>(x.experts);
  s.width = static_cast<double>(x.expert_ffn) / etp;
  return s;
}

}  // namespace gf::work
