#include "sched/policy.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gf::sched {

namespace {

std::map<std::string, PolicyFactory>& registry() {
  static std::map<std::string, PolicyFactory> r;
  return r;
}

}  // namespace

std::vector<int> Policy::nodes_for(const Job&, const PlacementContext&) const { return {}; }

std::optional<Placement> place_job(ClusterState& c, const Job& job, const Policy& policy, const TargetWorkload& w,
                                   double now) {
  const std::vector<int> nodes = policy.nodes_for(job, PlacementContext{c, w, now});
  const bool all = nodes.empty();
  const int count = all ? static_cast<int>(c.nodes().size()) : static_cast<int>(nodes.size());
  Placement placed;
  std::vector<PodPlacement> options;
  for (int pod = 0; pod < job.pods; ++pod) {
    const PlacementContext ctx{c, w, now};
    double best = std::numeric_limits<double>::infinity();
    PodPlacement chosen;
    for (int k = 0; k < count; ++k) {
      const int n = all ? k : nodes[static_cast<std::size_t>(k)];
      options.clear();
      c.options(n, job.pod, policy.local_gpus(), options);
      for (auto& o : options) {
        const double s = policy.score(o, job.pod, ctx);
        if (s < best) best = s, chosen = std::move(o);
      }
    }
    if (chosen.node < 0) {
      for (const auto& p : placed) c.release(job.pod, p);
      return std::nullopt;
    }
    c.allocate(job.pod, chosen);
    placed.push_back(std::move(chosen));
  }
  return placed;
}

bool register_policy(const std::string& name, PolicyFactory make) {
  return registry().emplace(name, std::move(make)).second;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const std::string& flag) {
  const auto it = registry().find(name);
  if (it == registry().end()) {
    const auto names = policy_names();
    const std::string close = suggest(name, names);
    throw InputError(
        {}, flag,
        fmt::format("no policy '{}'{}", name, close.empty() ? "" : fmt::format(" (did you mean '{}'?)", close)),
        join(names));
  }
  return it->second();
}

std::vector<std::string> policy_names() {
  // The baselines first, then the topology- and fragmentation-aware ones, then the preemptive.
  static const std::vector<std::string> order{"fifo",     "first-fit", "best-fit", "random-fit", "dot-product",
                                              "backfill", "topology",  "fgd",      "tiresias"};
  std::vector<std::string> out;
  for (const auto& n : order)
    if (registry().count(n)) out.push_back(n);
  for (const auto& [n, make] : registry())
    if (std::find(order.begin(), order.end(), n) == order.end()) out.push_back(n);
  return out;
}

}  // namespace gf::sched
