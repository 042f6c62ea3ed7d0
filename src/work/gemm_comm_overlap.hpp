#pragma once
// Sequence-parallel collectives hidden under the GEMMs beside them, as Transformer Engine's
// userbuffers run them (Megatron's --tp-comm-overlap; data/compute/efficiency.yaml,
// tp_comm_overlap). Each GEMM is cut in chunks so the transfer of one chunk runs while another
// multiplies: what the GEMM chunks cannot cover stays in the critical path, and the overlap has
// costs of its own (a kernel per chunk, the SMs the reduce-scatter's kernel holds).
#include "work/compute_efficiency.hpp"

namespace gf::work {

struct OverlapCost {
  double exposed_s = 0;        // of the collective, beyond the GEMM chunks that hide it
  double extra_compute_s = 0;  // what the GEMM loses to the split and to the SMs the collective holds
};

// The all-gather feeding a GEMM (QKV, FC1), as a ring exchange: the GEMM runs in `tp` chunks, the
// local one first, and each of the tp - 1 remote chunks arrives (by copy engine, no SMs) while
// the previous chunk multiplies. `fixed_s`: the per-kernel cost of a GEMM.
OverlapCost ring_exchange_all_gather(double gather_s, double gemm_s, long tp, double fixed_s);

// The reduce-scatter draining a GEMM (output projection, FC2), pipelined: the GEMM runs in
// `ub.pipeline_splits` chunks on the SMs the scatter's kernel leaves it (`sms` of the GPU, 0 if
// unknown), and each chunk is scattered while the next multiplies; the last chunk's scatter
// has nothing left to hide under.
OverlapCost pipelined_reduce_scatter(double scatter_s, double gemm_s, int sms, const UserbuffersOverlap& ub,
                                     double fixed_s);

}  // namespace gf::work
