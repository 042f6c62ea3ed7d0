#include "work/memory_fit.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gf::work {

namespace {

// Whether `train` would accept the layout for this model and batch (the checks of
// train_step that concern memory's inputs).
bool valid(const ModelSpec& m, const ParallelLayout& l, long micro, long global) {
  if (l.tp < 1 || l.pp < 1 || l.dp < 1 || l.cp < 1) return false;
  if (m.is_transformer() && (m.heads % l.tp != 0 || l.pp > m.layers)) return false;
  if (!m.is_transformer() && (l.pp > 1 || l.cp > 1)) return false;
  if (l.ep > 1 && l.gpus() % (l.expert_tp() * l.ep * l.pp) != 0) return false;  // MoE parallel folding
  if (global % (micro * l.dp) != 0) return false;
  const long micro_batches = global / (micro * l.dp);
  if (l.vpp > 1 && l.pp > 1 && micro_batches % l.pp != 0) return false;
  return true;
}

}  // namespace

std::vector<FitOption> fit_options(const ModelSpec& m, const ParallelLayout& layout, const MemoryOptions& memory,
                                   long global_batch, double gpu_memory) {
  std::vector<FitOption> out;
  auto consider = [&](std::string change, const ParallelLayout& l, MemoryOptions o) {
    if (!valid(m, l, o.micro_batch, global_batch)) return;
    o.micro_batches = global_batch / (o.micro_batch * l.dp);
    const double total = training_memory(m, l, o).total;
    if (total <= gpu_memory) out.push_back({std::move(change), total});
  };
  // Recomputation: Megatron's selective (the attention core), then every layer.
  if (memory.recompute == Recompute::none) {
    auto o = memory;
    o.recompute = Recompute::selective;
    consider("--recompute selective", layout, o);
  }
  if (memory.recompute != Recompute::full) {
    auto o = memory;
    o.recompute = Recompute::full;
    consider("--recompute full", layout, o);
  }
  // Sequence parallelism splits the activations TP leaves whole.
  if (layout.tp > 1 && !layout.sequence_parallel && m.is_transformer()) {
    auto l = layout;
    l.sequence_parallel = true;
    consider("--sequence-parallel", l, memory);
  }
  // A sharded optimizer: Megatron's distributed optimizer, then ZeRO-3 / FSDP full sharding.
  if (layout.dp * layout.cp > 1 && memory.sharding == Sharding::none && !memory.distributed_optimizer) {
    auto o = memory;
    o.distributed_optimizer = true;
    consider("--distributed-optimizer", layout, o);
    o = memory;
    o.sharding = Sharding::fsdp_full;
    consider("--fsdp full", layout, o);
  }
  // A smaller micro-batch (more of them per step).
  for (long micro = memory.micro_batch / 2; micro >= 1; micro /= 2) {
    auto o = memory;
    o.micro_batch = micro;
    consider(fmt::format("--micro-batch {}", micro), layout, o);
    if (!out.empty() && out.back().change == fmt::format("--micro-batch {}", micro)) break;  // the largest that fits
  }
  // More model parallelism on the same GPUs: TP or PP doubled, DP halved.
  if (layout.dp % 2 == 0) {
    auto l = layout;
    l.tp *= 2;
    l.dp /= 2;
    consider(fmt::format("--tp {} --dp {}", l.tp, l.dp), l, memory);
    l = layout;
    l.pp *= 2;
    l.dp /= 2;
    consider(fmt::format("--pp {} --dp {}", l.pp, l.dp), l, memory);
  }
  std::sort(out.begin(), out.end(), [](const FitOption& a, const FitOption& b) { return a.memory < b.memory; });
  return out;
}

}  // namespace gf::work
