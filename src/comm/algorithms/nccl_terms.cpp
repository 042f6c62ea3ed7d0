#include "comm/algorithms/nccl_terms.hpp"

#include <algorithm>

#include "comm/communicator.hpp"

namespace gf::comm {

double nccl_ll_max_GBps(const Communicator& c) {
  const int ll_row = c.nodes() == 1 ? static_cast<int>(c.gpu_generation()) : (c.amd_cpu() ? 1 : 0);
  return c.params().tuner.ll_max_GBps[ll_row][nccl_node_index(c)];
}

NcclLatencyTerms nccl_latency_terms(const Communicator& c, Algo a, Proto p) {
  const auto& t = c.params().tuner;
  const HopKind intra_hw = c.nvlink_intra() ? HopKind::nvlink : HopKind::pcie;
  const HopKind hw = c.nodes() == 1 ? intra_hw : HopKind::net;
  auto hop = [&](HopKind k, Algo algo) { return std::max(0.0, t.hop_us(k, algo, p)); };
  NcclLatencyTerms out;
  out.base = std::max(0.0, t.base_us(a, p));
  out.intra = hop(intra_hw, a);
  out.inter = c.ranks_per_node() == 1 ? hop(HopKind::net, Algo::tree) : hop(HopKind::net, a);
  out.hw = hop(hw, a);
  return out;
}

std::optional<double> nccl_nvls_busbw(const Communicator& c, Op op, int channels, double nvlink_GBps) {
  const double eff = c.params().tuner.nvls_efficiency[static_cast<int>(c.gpu_generation())];
  const double nch = channels;
  if (!(eff > 0) || nch < 2) return std::nullopt;
  const long ppn = c.ranks_per_node();
  return nvlink_GBps * eff * (nch - 1) / nch *
         (op == Op::all_reduce ? 2.0 : static_cast<double>(ppn - 1) / static_cast<double>(ppn));
}

}  // namespace gf::comm
