#include "work/train_inline_comm.hpp"

#include <algorithm>

#include "work/gemm_comm_overlap.hpp"
#include "work/nccl_sm_share.hpp"
#include "work/pp_schedule.hpp"

namespace gf::work {

namespace {

// Whether every peer of the group is reached from its first GPU over NVLink (directly or through
// NVSwitch), the path Transformer Engine's userbuffers need.
bool tp_over_nvlink(const topo::Topology& t, const comm::Communicator& group) {
  for (long r = 1; r < group.ranks(); ++r)
    if (t.route_gpus(group.gpu_of(0), group.gpu_of(r)).transport != topo::Transport::nvlink) return false;
  return true;
}

// The steady-state share of the micro-batches whose forward can run merged with another's
// backward (Megatron's ep-a2a overlap): all but the warm-up forwards.
double paired_share(const ParallelLayout& l, long micro_batches) {
  const long chunks = std::max<long>(1, l.vpp);
  const double total = static_cast<double>(micro_batches * chunks);
  if (l.pp <= 1) return (total - 1) / total;
  const long warm = warmup_forwards({l.pp, chunks, micro_batches, l.overlap_p2p_comm}, 0);
  return std::max(0.0, total - static_cast<double>(warm)) / total;
}

// One TP collective (an all-reduce; with sequence parallelism a reduce-scatter and an
// all-gather moving the same) as the compute waits for it. With --tp-comm-overlap over NVLink
// the all-gather and reduce-scatter of each half run in chunks under the GEMM they feed or drain
// (Transformer Engine's userbuffers): what the chunks cannot cover shows, and so does what the
// split and the scatter's SMs cost the GEMM. The backward's data-gradient GEMMs have the same
// shapes.
double tp_exposed(TrainingContext& cache, const InlineCommRequest& r, bool overlap, const TransformerLayerCost& c) {
  if (r.groups.tp == nullptr || c.tp_bytes <= 0) return 0.0;
  const double tp_s = cache.collective(*r.groups.tp, comm::Op::all_reduce, c.tp_bytes, r.dtype).time.value();
  if (!(overlap && tp_s > 0)) return tp_s;
  const ComputeContext& ctx = r.context;
  const double half = tp_s / 2;
  const UserbuffersOverlap& ub = ctx.efficiency.userbuffers();
  const long tp = r.layout.tp;
  double cost = 0;
  for (const OverlapCost& x : {ring_exchange_all_gather(half, c.attention_entry_gemm, tp, ctx.fixed_s),
                               pipelined_reduce_scatter(half, c.attention_exit_gemm, ctx.sms, ub, ctx.fixed_s),
                               ring_exchange_all_gather(half, c.ffn_entry_gemm, tp, ctx.fixed_s),
                               pipelined_reduce_scatter(half, c.ffn_exit_gemm, ctx.sms, ub, ctx.fixed_s)})
    cost += x.exposed_s + x.extra_compute_s;
  return cost / 2;  // the mean over the two halves, as tp_s stands for either
}

// One layer's collectives: TP, then ring attention's exchange (each of CP - 1 steps passes a
// key/value chunk to the next CP rank while the attention core works on the one it holds, as
// Transformer Engine's context parallelism does; backward passes the chunk and its gradient),
// then the dispatch and combine all-to-alls in the forward and again in the backward.
LayerCollectives layer_collectives(TrainingContext& cache, const InlineCommRequest& r, const InlineComm& shared,
                                   const TransformerLayerCost& c) {
  LayerCollectives out;
  out.tp_s = tp_exposed(cache, r, shared.tp_overlap, c);
  const std::vector<long>& ring = r.groups.cp_ring;
  if (!(ring.size() < 2 || c.cp_chunk_bytes <= 0)) {
    const double step =
        cache.collective({ring[0], ring[1]}, comm::Op::sendrecv, c.cp_chunk_bytes, r.dtype).time.value();
    const double steps = static_cast<double>(r.layout.cp - 1);
    out.cp_forward_s = std::max(0.0, steps * step - c.attention_core_forward);
    out.cp_backward_s = std::max(0.0, 2 * steps * step - c.attention_core_backward);
  }
  const double a2a = r.groups.ep == nullptr || c.dispatch_bytes <= 0
                         ? 0.0
                         : cache.collective(*r.groups.ep, comm::Op::alltoall, c.dispatch_bytes, r.dtype).time.value();
  out.ep = exposed_all_to_all(r.moe_overlap, {a2a, c.attention_forward + c.ffn_forward, c.shared_expert_forward},
                              {a2a, c.attention_backward + c.ffn_backward, c.shared_expert_backward}, shared.paired,
                              shared.a2a_sm_share);
  return out;
}

}  // namespace

InlineComm inline_collectives(TrainingContext& cache, const InlineCommRequest& r) {
  const topo::Topology& t = cache.topology();
  const ParallelLayout& l = r.layout;
  InlineComm out;
  if (l.ep > 1 && l.tp > 1 && !l.sequence_parallel)
    out.assumptions.push_back(
        "EP with TP but without --sequence-parallel: every TP rank dispatches the whole micro-batch's tokens "
        "(Megatron-Core refuses this combination: its TransformerConfig requires sequence parallelism)");
  // Transformer Engine's userbuffers overlap runs only where every TP peer is reached over
  // NVLink inside one server (data/compute/efficiency.yaml, tp_comm_overlap); elsewhere the
  // flag changes nothing and the collectives stay in the critical path.
  out.tp_overlap = l.tp_comm_overlap && r.groups.tp != nullptr && tp_over_nvlink(t, *r.groups.tp);
  if (out.tp_overlap && !t.node().nvswitch_sharp())
    out.assumptions.push_back(
        "--tp-comm-overlap here runs without CUDA multicast (no NVLink-SHARP NVSwitch): Transformer Engine's "
        "initialize_ub refuses that unless UB_SKIPMC=1 is set, which sends the userbuffers over CUDA IPC");
  if (l.tp_comm_overlap && !out.tp_overlap)
    out.assumptions.push_back(
        "--tp-comm-overlap asked for, but the TP group is not joined by NVLink inside one server: Transformer "
        "Engine's userbuffers overlap needs that, so the TP collectives are in the critical path");
  out.paired = paired_share(l, r.micro_batches);
  if (r.groups.ep != nullptr && r.moe_overlap != MoeOverlap::none)
    out.a2a_sm_share = sm_share(t, cache.collective(*r.groups.ep, comm::Op::alltoall, 1 << 20, r.dtype).channels);
  out.dense = layer_collectives(cache, r, out, r.costs.dense);
  out.expert = r.moe ? layer_collectives(cache, r, out, r.costs.expert) : out.dense;
  return out;
}

}  // namespace gf::work
