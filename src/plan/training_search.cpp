#include "plan/training_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "work/pipeline_split.hpp"
#include "work/training_memory.hpp"

namespace gf::plan {

std::string layout_label(const work::TrainOptions& o) {
  const auto& l = o.layout;
  std::string s = fmt::format("TP{} PP{} DP{}", l.tp, l.pp, l.dp);
  if (l.cp > 1) s += fmt::format(" CP{}", l.cp);
  if (l.ep > 1) s += fmt::format(" EP{} ETP{}", l.ep, l.expert_tp());
  if (l.vpp > 1) s += fmt::format(" VPP{}", l.vpp);
  if (l.sequence_parallel) s += " SP";
  if (l.tp_comm_overlap) s += " overlap";
  if (l.overlap_p2p_comm) s += " p2p-overlap";  // Megatron's --overlap-p2p-comm
  s += fmt::format(" mb{} {}", o.memory.micro_batch, work::to_string(o.memory.recompute));
  if (o.layout.ep > 1 && o.moe_overlap != work::MoeOverlap::none)
    s += std::string(" a2a-overlap:") + work::to_string(o.moe_overlap);
  // The distributed optimizer as the planner runs it: parameter all-gathers under the next forward.
  if (o.memory.distributed_optimizer) s += o.memory.overlap_param_gather ? " distopt+pg" : " distopt";
  if (o.memory.sharding != work::Sharding::none) s += std::string(" ") + work::to_string(o.memory.sharding);
  return s;
}

LayoutSearch search_layouts(work::TrainingContext& context, const TrainingWorkload& w, const SearchSpace& s,
                            long gpus) {
  LayoutSearch out;
  const auto& m = w.model;
  const auto& t = context.topology();
  const double memory = t.gpu_spec().memory.value();
  const long per_node = t.gpus_per_node();
  std::vector<long> pps = s.pp;
  if (pps.empty()) {
    // Every divisor of the layers, and the powers of two (Megatron-LM places the remainder of
    // an uneven split on the first and last stages; the busiest stage, with the most layers,
    // paces the pipeline).
    for (long p = 1; p <= std::min<long>(m.layers, 128); ++p)
      if (m.layers % p == 0 || (p & (p - 1)) == 0) pps.push_back(p);
  }
  std::vector<long> eps = s.ep;
  if (m.moe && eps.size() == 1 && eps.front() == 1) {
    for (long e = 1; e <= std::min<long>(m.moe->experts, 64); e *= 2)
      if (m.moe->experts % e == 0 && e > 1) eps.push_back(e);
  }
  // The MoE schedules a layout may run (each still filtered by Megatron's rules below).
  std::vector<work::MoeOverlap> overlaps = s.moe_overlap;
  if (overlaps.empty()) {
    overlaps = {work::MoeOverlap::none, work::MoeOverlap::ep_a2a};
    if (m.moe && m.moe->shared_experts > 0) overlaps.push_back(work::MoeOverlap::shared_expert);
  }
  std::vector<long> vpps = s.vpp;
  if (vpps.empty()) {
    for (long v = 1; v <= 8; ++v) vpps.push_back(v);  // filtered per PP below
  }
  // Megatron-Core's split rules (pipeline_split.hpp) depend on PP and VPP alone: decided once
  // per pair here, not in the innermost loop, where a refusal (an InputError with its message)
  // made the search several times slower.
  struct SplitChoice {
    bool valid = true;
    work::ParallelLayout::StageSplit split;
  };
  std::map<std::pair<long, long>, SplitChoice> splits;
  for (long pp : pps) {
    for (long vpp : vpps) {
      SplitChoice c;
      if (vpp > 1 && pp == 1) {
        c.valid = false;
      } else if (pp > 1) {
        const auto [first, last] = work::balanced_edges(m.layers, pp, vpp);
        c.split.first_stage_layers = std::max<long>(0, first);
        c.split.last_stage_layers = std::max<long>(0, last);
        work::ParallelLayout probe;
        probe.pp = pp;
        probe.vpp = vpp;
        probe.overlap_p2p_comm = vpp > 1 && pp == 2;  // what Megatron requires of 2 interleaved stages
        probe.split = c.split;
        c.valid = work::pipeline_split_valid(work::split_request(m.layers, probe));
      }
      splits[{pp, vpp}] = c;
    }
  }
  // What a layout with EP > 1 is also timed under: each ETP asked for (0: as TP) with each schedule;
  // a layout without EP has one plain variant. Built once, not per layout in the loops below.
  struct ExpertVariant {
    long etp_asked = 0;
    work::MoeOverlap overlap = work::MoeOverlap::none;
  };
  const std::vector<ExpertVariant> plain{ExpertVariant{}};
  std::vector<ExpertVariant> expert;
  for (long e : s.etp)
    for (auto o : overlaps) expert.push_back({e, o});
  const bool etp_as_tp_listed = std::find(s.etp.begin(), s.etp.end(), 0L) != s.etp.end();
  double best = std::numeric_limits<double>::infinity();
  out.smallest_memory = std::numeric_limits<double>::infinity();
  for (long tp : s.tp)
    for (long pp : pps)
      for (long cp : s.cp)
        for (long ep : eps)
          for (long vpp : vpps)
            for (bool overlap : s.tp_comm_overlap)
              for (long mb : s.micro_batch)
                for (auto recompute : s.recompute)
                  for (auto sharding : s.sharding)
                    for (const auto& [etp_asked, moe_overlap] : ep > 1 ? expert : plain) {
                      // ETP "as TP" and ETP equal to TP are one layout: timed once.
                      const long etp = etp_asked == 0 ? tp : etp_asked;
                      if (etp_asked > 0 && etp_asked == tp && etp_as_tp_listed) continue;
                      // Megatron's interleaved schedule: at least one layer per virtual stage (uneven
                      // splits go to the first and last stages, as Megatron-Core's
                      // --decoder-first/last-pipeline-num-layers allow), and the micro-batches a
                      // multiple of the stages; overlap needs TP with sequence parallelism.
                      // Megatron-Core's split rules (pipeline_split.hpp): a PP that does not divide
                      // the layers takes the most even first/last stages Megatron accepts; a layout
                      // it would refuse is never generated. Overlap needs TP with sequence
                      // parallelism.
                      const SplitChoice& choice = splits.at({pp, vpp});
                      if (!choice.valid) {
                        ++out.invalid;
                        continue;
                      }
                      const work::ParallelLayout::StageSplit& split = choice.split;
                      if (overlap && (tp == 1 || !(t.node().nvswitch_sharp() || s.tp_comm_overlap_ipc))) {
                        ++out.invalid;
                        continue;
                      }
                      const long model_parallel = tp * pp * cp;
                      const bool valid = gpus % model_parallel == 0 && m.heads % tp == 0 &&
                                         (s.tp_across_nodes || tp <= per_node) && (cp == 1 || m.seq % (2 * cp) == 0);
                      if (!valid) {
                        ++out.invalid;
                        continue;
                      }
                      const long dp = gpus / model_parallel;
                      if (w.global_batch % (mb * dp) != 0 ||
                          (ep > 1 && (!m.moe || (tp * cp * dp) % (etp * ep) != 0 || m.moe->experts % ep != 0)) ||
                          ((sharding == work::Sharding::zero3 || sharding == work::Sharding::fsdp_full) &&
                           (tp > 1 || pp > 1))) {
                        ++out.invalid;
                        continue;
                      }
                      work::TrainOptions o;
                      o.layout.tp = tp;
                      o.layout.pp = pp;
                      o.layout.cp = cp;
                      o.layout.ep = ep;
                      o.layout.dp = dp;
                      o.layout.sequence_parallel = tp > 1;
                      o.layout.vpp = vpp;
                      o.layout.tp_comm_overlap = overlap;
                      o.layout.split = split;
                      // Posted-ahead sends only where Megatron requires them (2 interleaved stages):
                      // elsewhere the blocking sends' closed form holds, where overlapped sends slower
                      // than a chunk would need the schedule timed as a graph for every layout.
                      o.layout.overlap_p2p_comm = vpp > 1 && pp == 2;
                      o.layout.etp = ep > 1 ? etp : 0;  // the experts' own grid, EP folded over TP x CP x DP
                      o.moe_overlap = moe_overlap;
                      const long micro_batches = w.global_batch / (mb * dp);
                      if (vpp > 1 && micro_batches % pp != 0) {
                        ++out.invalid;
                        continue;
                      }
                      // Megatron-Core's and DeepSeek's rules for the overlap schedules (train_step's).
                      const bool a2a_refused = moe_overlap == work::MoeOverlap::ep_a2a &&
                                               ((pp > 1 && vpp < 2) || recompute == work::Recompute::full);
                      const bool dualpipe_refused = moe_overlap == work::MoeOverlap::dualpipe &&
                                                    (pp % 2 != 0 || vpp > 1 || micro_batches % 2 != 0);
                      if (a2a_refused || dualpipe_refused) {
                        ++out.invalid;
                        continue;
                      }
                      o.memory.precision = w.precision;
                      o.memory.recompute = recompute;
                      o.memory.micro_batch = mb;
                      o.memory.gpus_per_node = per_node;
                      o.memory.micro_batches = w.global_batch / (mb * dp);
                      // Megatron's distributed optimizer is ZeRO-1 over DP; with TP or PP it is the
                      // form used (DeepSpeed's ZeRO stages are for data parallelism alone).
                      // It runs with its parameter all-gathers under the next forward, as
                      // Megatron-Core's benchmarks and Megatron-Bridge's recipes set it up.
                      if (sharding == work::Sharding::zero1) {
                        o.memory.distributed_optimizer = true;
                        o.memory.overlap_param_gather = true;
                      } else {
                        o.memory.sharding = sharding;
                      }
                      o.memory.dualpipe = moe_overlap == work::MoeOverlap::dualpipe;
                      o.global_batch = w.global_batch;
                      o.gpus = gpus;
                      ++out.layouts;  // a layout Megatron-LM would accept: it is evaluated (memory, then time)
                      const auto mem = work::training_memory(m, o.layout, o.memory);
                      out.smallest_memory = std::min(out.smallest_memory, mem.total);
                      if (mem.total > memory) {
                        ++out.pruned_memory;
                        continue;
                      }
                      ++out.timed;
                      work::TrainResult r;
                      try {
                        r = work::train_step(context, m, o);
                      } catch (const InputError&) {
                        --out.layouts;  // a rule of the step model the checks above do not repeat
                        ++out.invalid;
                        continue;
                      }
                      if (!r.fits) {
                        ++out.pruned_memory;
                        continue;
                      }
                      if (r.step_s < best) {
                        best = r.step_s;
                        out.best = o;
                        out.result = std::move(r);
                      }
                    }
  return out;
}

}  // namespace gf::plan
