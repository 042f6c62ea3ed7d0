#pragma once
// How much of an MoE layer's dispatch and combine all-to-alls the step waits for, under the
// overlap schedules the frameworks publish:
//   none           the all-to-alls run between the kernels that need them (Megatron-Core's
//                  default: --moe-shared-expert-overlap and --overlap-moe-expert-parallel-comm
//                  both off);
//   shared-expert  Megatron-Core's --moe-shared-expert-overlap: the shared experts compute on a
//                  side stream while the routed tokens are dispatched and combined;
//   ep-a2a         Megatron-Core's --overlap-moe-expert-parallel-comm ("1F1B A2A overlap"): in the
//                  steady state of 1F1B one micro-batch's forward runs merged with another's
//                  backward, each one's all-to-alls under the other's compute (TransformerConfig
//                  requires EP > 1, VPP with PP > 1, no full recomputation);
//   dualpipe       DeepSeek's DualPipe (DeepSeek-V3 technical report, arXiv:2412.19437, Section
//                  3.2.1): forward and backward chunks paired on every micro-batch so that "both
//                  all-to-all and PP communication can be fully hidden", with a bubble of
//                  (PP/2 - 1) x (F&B + B - 3W) (Table 2); PP and micro-batches even.
// Hidden communication is not free: its kernels hold SMs the compute would use (DeepSeek gives
// 20 of the H800's 132 SMs to it), so the compute under it slows by that share.
#include <optional>
#include <string>

#include "core/enum_names.hpp"

namespace gf::work {

enum class MoeOverlap { none, shared_expert, ep_a2a, dualpipe };
inline constexpr EnumNames<MoeOverlap, 4> kMoeOverlapNames{{{MoeOverlap::none, "none"},
                                                            {MoeOverlap::shared_expert, "shared-expert"},
                                                            {MoeOverlap::ep_a2a, "ep-a2a"},
                                                            {MoeOverlap::dualpipe, "dualpipe"}}};
const char* to_string(MoeOverlap o);
inline std::optional<MoeOverlap> moe_overlap_named(const std::string& name) {
  return parse_name(kMoeOverlapNames, name);
}

// One MoE layer in one pass (forward or backward) of one micro-batch.
struct MoePass {
  double all_to_all_s = 0;  // one all-to-all (dispatch, or combine)
  double compute_s = 0;     // the layer's compute in this pass, all-to-alls left out
  double shared_s = 0;      // of which the shared experts
};

struct MoeExposure {
  double forward_s = 0;  // all-to-all time the forward waits for (and SM slowdown under hidden ones)
  double backward_s = 0;
  double hidden_s = 0;  // all-to-all time hidden under compute
};

// `paired` is the share of the micro-batches whose forward runs merged with another's backward
// (the steady state of the schedule; ep-a2a only). `sm_share` is the share of the SMs the
// all-to-all kernels hold while hidden.
MoeExposure exposed_all_to_all(MoeOverlap o, const MoePass& forward, const MoePass& backward, double paired,
                               double sm_share);

}  // namespace gf::work
