#include "work/gemm_comm_overlap.hpp"

#include <algorithm>

namespace gf::work {

OverlapCost ring_exchange_all_gather(double gather_s, double gemm_s, long tp, double fixed_s) {
  if (gather_s <= 0 || tp < 2) return {};
  const double steps = static_cast<double>(tp - 1);
  const double chunk = gemm_s / static_cast<double>(tp);
  // Step i sends one remote shard while chunk i multiplies; a shard slower than its chunk shows.
  return {steps * std::max(0.0, gather_s / steps - chunk), steps * fixed_s};
}

OverlapCost pipelined_reduce_scatter(double scatter_s, double gemm_s, int sms, const UserbuffersOverlap& ub,
                                     double fixed_s) {
  if (scatter_s <= 0) return {};
  const int splits = std::max(1, ub.pipeline_splits);
  // The scatter's SMs are kept from the GEMM for its whole run (set_sm_margin).
  const double slowed = sms > ub.pipeline_comm_sms && ub.pipeline_comm_sms > 0
                            ? gemm_s * static_cast<double>(sms) / static_cast<double>(sms - ub.pipeline_comm_sms)
                            : gemm_s;
  const double n = static_cast<double>(splits);
  const double chunk_scatter = scatter_s / n;
  const double chunk_gemm = slowed / n;
  // Chunks 1..n-1 scatter under the next chunk's GEMM; the last chunk's scatter runs alone.
  const double exposed = chunk_scatter + (n - 1) * std::max(0.0, chunk_scatter - chunk_gemm);
  return {exposed, slowed - gemm_s + (n - 1) * fixed_s};
}

}  // namespace gf::work
