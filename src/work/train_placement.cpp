#include "work/train_placement.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "work/flag_refusal.hpp"

namespace gf::work {

long job_gpus(const topo::Topology& t, const TrainOptions& o) {
  const bool placed = !o.placement.empty();
  const long gpus = placed ? static_cast<long>(o.placement.size()) : o.gpus > 0 ? o.gpus : t.gpu_count();
  refuse_if(gpus > t.gpu_count(), "--gpus", fmt::format("{} GPUs asked for; the cluster has {}", gpus, t.gpu_count()),
            "at most the cluster's GPUs");
  if (placed) {
    // A placement may leave parts of nodes (a scheduler's choice); it must name distinct GPUs.
    refuse_if(o.gpus > 0 && o.gpus != gpus, "--gpus",
              fmt::format("{} GPUs asked for, but the placement names {}", o.gpus, gpus),
              "as many GPUs as the placement");
    std::vector<long> sorted = o.placement;
    std::sort(sorted.begin(), sorted.end());
    refuse_if(sorted.front() < 0 || sorted.back() >= t.gpu_count(), "placement",
              fmt::format("GPU {} is not in the cluster's {}", sorted.front() < 0 ? sorted.front() : sorted.back(),
                          t.gpu_count()),
              fmt::format("global GPU indices 0 to {}", t.gpu_count() - 1));
    refuse_if(std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end(), "placement", "names a GPU twice",
              "one rank per GPU");
  } else {
    refuse_if(gpus > t.gpus_per_node() && gpus % t.gpus_per_node() != 0, "--gpus",
              fmt::format("{} GPUs do not fill whole {}-GPU nodes", gpus, t.gpus_per_node()),
              "a multiple of the GPUs per node, or at most one node's");
  }
  return gpus;
}

PlacedBackground background_job(const BackgroundRequest& r) {
  const topo::Topology& t = r.topology;
  const TrainOptions& o = r.options;
  PlacedBackground out;
  if (!(o.background_bytes > 0)) return out;
  refuse_if(r.gpus >= t.gpu_count() || t.gpu_count() - r.gpus < 2, "--background", "no GPUs are left for another job",
            "--gpus N with at least two of the cluster's GPUs left over");
  BackgroundJob& background = out.job;
  if (!o.placement.empty()) {
    // The GPUs the placement leaves, wherever they are.
    std::vector<bool> mine(static_cast<std::size_t>(t.gpu_count()), false);
    for (long g : o.placement) mine[static_cast<std::size_t>(g)] = true;
    for (long g = 0; g < t.gpu_count(); ++g)
      if (!mine[static_cast<std::size_t>(g)]) background.gpus.push_back(g);
  } else {
    refuse_if((t.gpu_count() - r.gpus) % t.gpus_per_node() != 0 && r.gpus > t.gpus_per_node(), "--background",
              "the GPUs left over do not fill whole nodes", "--gpus N leaving whole nodes");
    for (long g = r.gpus; g < t.gpu_count(); ++g) background.gpus.push_back(g);
  }
  background.op = o.background_op;
  background.bytes = o.background_bytes;
  out.assumptions.push_back(fmt::format("another job on the {} GPUs left runs {} of {:.3g} MB back to back",
                                        background.gpus.size(), comm::to_string(background.op),
                                        background.bytes / 1e6));
  return out;
}

}  // namespace gf::work
