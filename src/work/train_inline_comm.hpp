#pragma once
// Training step, communication in the critical path: the collectives a transformer layer's
// compute waits for. Tensor parallelism's all-reduces (or all-gathers and reduce-scatters with
// sequence parallelism, hidden under the GEMMs by --tp-comm-overlap where Transformer Engine can),
// ring attention's key/value exchange beyond the attention core it overlaps (context
// parallelism), and the expert-parallel dispatch and combine all-to-alls as the MoE overlap
// leaves them exposed.
#include <string>
#include <vector>

#include "work/moe_overlap.hpp"
#include "work/parallel_layout.hpp"
#include "work/train_compute.hpp"
#include "work/train_groups.hpp"
#include "work/training_context.hpp"

namespace gf::work {

struct InlineCommRequest {
  const RankGroups& groups;  // the representative GPU's TP and EP groups and CP ring
  const ParallelLayout& layout;
  const ComputeContext& context;  // the GEMMs' rates, for what --tp-comm-overlap hides
  const std::string& dtype;       // the activations' type as nccl-tests names it
  MoeOverlap moe_overlap = MoeOverlap::none;
  long micro_batches = 1;  // per step (the share ep-a2a merges depends on the schedule's warm-up)
  const TransformerCosts& costs;
  bool moe = false;  // the model has MoE layers (priced apart from the dense ones)
};

// One layer's collectives in the critical path for one micro-batch (seconds).
struct LayerCollectives {
  double tp_s = 0;          // one TP collective as the compute waits for it; a layer runs four (two halves, two passes)
  double cp_forward_s = 0;  // the ring's exchange beyond the forward attention core
  double cp_backward_s = 0;
  MoeExposure ep;  // the all-to-alls the forward and backward wait for (zero for a dense layer)
};

struct InlineComm {
  LayerCollectives dense;
  LayerCollectives expert;  // an MoE layer's (a dense model: the dense layer's)
  bool tp_overlap = false;  // the TP collectives run under the GEMMs (--tp-comm-overlap over NVLink)
  double paired = 0;        // the share of micro-batches whose forward merges with a backward (ep-a2a)
  double a2a_sm_share = 0;  // the share of the SMs hidden all-to-alls hold
  std::vector<std::string> assumptions;
};

InlineComm inline_collectives(TrainingContext& cache, const InlineCommRequest& r);

}  // namespace gf::work
