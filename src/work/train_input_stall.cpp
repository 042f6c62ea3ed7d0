#include "work/train_input_stall.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "work/train_groups.hpp"

namespace gf::work {

InputStall input_stall(const InputStallRequest& r) {
  const ParallelLayout& l = r.layout;
  // The slowest loading stage (the GPUs' own compute is the step's, not the loaders').
  double rate = std::numeric_limits<double>::infinity();
  std::string limit;
  for (const auto& st : r.input.stages) {
    if (st.name == "GPU compute" || !(st.loaded > 0)) continue;
    if (st.loaded < rate) {
      rate = st.loaded;
      limit = st.name;
    }
  }
  std::map<long, long> replicas;
  long busiest = 0;
  for (const long g : on_gpus(group_of(l, r.order, Axis::dp, 0), r.placement))
    busiest = std::max(busiest, ++replicas[g / r.gpus_per_node]);
  const double per_node =
      static_cast<double>(r.global_batch) / static_cast<double>(l.dp) * static_cast<double>(busiest);
  const double load_s = std::isfinite(rate) ? per_node / rate : 0.0;
  InputStall out;
  out.stall_s = r.input.overlapped ? std::max(0.0, load_s - r.step_s) : load_s;
  out.assumptions.push_back(fmt::format(
      "input {}: each node's pipeline loads {:.4g} samples/s ({} limits it){}; the busiest node feeds {} "
      "data-parallel replica{} of {:.4g} samples a step",
      r.name.empty() ? std::string("pipeline") : r.name, rate, limit.empty() ? "nothing" : limit,
      r.input.overlapped ? ", prefetching beside the step" : ", one stage after another, not beside the step", busiest,
      busiest == 1 ? "" : "s", static_cast<double>(r.global_batch) / static_cast<double>(l.dp)));
  return out;
}

}  // namespace gf::work
