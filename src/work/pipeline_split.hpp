#pragma once
// Which transformer layers each pipeline stage holds, by Megatron-Core's rules, so that a layout
// Megatron would refuse is refused here too (with what would be valid), and an uneven one is
// priced at its slowest stage.
//
// Megatron-Core accepts four ways to split the layers (NVIDIA/Megatron-LM
// megatron/training/arguments.py `validate_args` and megatron/core/transformer/
// transformer_config.py `TransformerConfig.__post_init__`, "Uneven PP"):
//   - even: the layers (plus one each for the embedding and the loss with
//     --account-for-embedding/loss-in-pipeline-split) divide by PP, and with the interleaved
//     schedule each stage's layers divide by VPP ("Number of layers should be divisible by the
//     pipeline-model-parallel size"; "number of layers per pipeline stage must be divisible");
//   - --decoder-first/last-pipeline-num-layers: each given edge stage holds that many (> 0, and a
//     multiple of VPP), the middle stages split the rest evenly, a multiple of VPP each, and
//     there are middle layers exactly when there are middle stages;
//   - --pipeline-model-parallel-layout: every virtual stage's layers spelled out, e.g.
//     "Et|(tt|)*30mL" (Megatron-Bridge's DeepSeek-V3 recipe for PP 8 x VPP 4): E the embedding,
//     t a transformer layer, m the multi-token-prediction block, L the loss, | between virtual
//     stages, (...)*n and t*n repeat; it names PP x VPP stages in virtual-stage order;
//   - torchtitan (not Megatron) spreads the layers as evenly as they go over PP x VPP virtual
//     stages (pipelining's `generate_split_points`): `balanced`.
// The interleaved schedule also needs PP > 2 unless sends overlap compute (arguments.py: "When
// interleaved schedule is used and p2p communication overlap is disabled,
// pipeline-model-parallel size should be greater than 2").
#include <string>
#include <utility>
#include <vector>

#include "work/parallel_layout.hpp"

namespace gf::work {

struct PipelineSplitRequest {
  long layers = 0;  // transformer layers
  long pp = 1;
  long vpp = 1;
  bool overlap_p2p = false;
  long first_stage_layers = 0;  // 0: not given
  long last_stage_layers = 0;
  bool account_for_embedding = false;
  bool account_for_loss = false;
  std::string layout;     // Megatron's --pipeline-model-parallel-layout; empty: not given
  bool balanced = false;  // torchtitan's split instead of Megatron's
};

struct PipelineSplit {
  // Per virtual stage (virtual stage v * PP + s is chunk v of pipeline stage s), in layer order:
  // how many transformer layers it holds.
  std::vector<long> virtual_layers;
  long pp = 1;
  long vpp = 1;
  // The transformer layers of pipeline stage `s` (all its chunks), as global layer indices.
  [[nodiscard]] std::vector<long> stage_layers(long s) const;
  // Every stage's layers at once (one pass over the layers: what a search evaluating thousands
  // of layouts calls, rather than stage_layers per stage).
  [[nodiscard]] std::vector<std::vector<long>> layers_by_stage() const;
  [[nodiscard]] long most_layers() const;  // the busiest stage's count
};

// The split, or an InputError naming the flag at fault and a split Megatron would accept.
PipelineSplit pipeline_split(const PipelineSplitRequest& r);

// The request for a model of `layers` transformer layers under this layout.
PipelineSplitRequest split_request(long layers, const ParallelLayout& l);

// Each stage's layer count, runs of equal ones joined: "4, 4 x 14, 1".
std::string stage_summary(const PipelineSplit& s);

// Whether Megatron would accept it (the planner's filter: it never generates a refused layout).
bool pipeline_split_valid(const PipelineSplitRequest& r);

// Edge stages that make an uneven split valid with the fewest layers on the busiest stage
// (lighter edges first, as they also hold the embedding and the loss); {0, 0} when the even
// split is valid, {-1, -1} when no first/last pair works.
std::pair<long, long> balanced_edges(long layers, long pp, long vpp);

}  // namespace gf::work
