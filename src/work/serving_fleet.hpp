#pragma once
// Replicas of one layout on a cluster, and the sizing of a fleet: for each candidate layout (TP x
// PP), the highest Poisson rate one replica serves within the latency goals, the replicas a
// target rate needs, and a check of that fleet under the whole rate. The layout that needs the
// fewest GPUs wins.
#include <memory>
#include <string>
#include <vector>

#include "topo/topology.hpp"
#include "work/serving_summary.hpp"

namespace gf::work {

// Replicas of one layout placed on the cluster's GPUs in order (replica i on GPUs i x TP x PP
// onwards, wrapping when the fleet is larger than the cluster: the nodes are alike).
class ReplicaSet {
public:
  ReplicaSet(TrainingContext& context, const ModelSpec& m, const ReplicaSpec& r, long replicas);
  [[nodiscard]] const std::vector<InferenceCost*>& replicas() const { return view_; }
  [[nodiscard]] InferenceCost& first() const { return *costs_.front(); }

private:
  std::vector<std::unique_ptr<InferenceCost>> costs_;  // one per distinct GPU set
  std::vector<InferenceCost*> view_;
};

struct LayoutSizing {
  ReplicaSpec replica;
  bool fits = false;  // the model fits and a lone replica can meet the goals
  std::string why_not;
  double replica_rate = 0;  // requests/s one replica serves within the goals
  long replicas = 0;
  long gpus = 0;
  long nodes = 0;
  ServingSummary fleet;       // the fleet under the whole rate (throughputs scaled to all replicas)
  long checked_replicas = 0;  // replicas simulated for that check (a slice of a large fleet)
  ServingSummary best;        // a lone replica at a light load (the best latencies it reaches)
};

struct FleetSizing {
  double rate = 0;
  std::vector<LayoutSizing> layouts;
  int chosen = -1;  // index of the layout needing the fewest GPUs; -1: none meets the goals
};

struct SizingOptions {
  SimulationOptions simulation;
  long requests = 1000;  // per simulated run
};

// `load` gives the lengths and the seed; its arrival kind is ignored (Poisson at the rates tried).
FleetSizing size_fleet(TrainingContext& context, const ModelSpec& m, const std::vector<ReplicaSpec>& candidates,
                       const LoadSpec& load, double rate, const SloSpec& slo, const SizingOptions& options);

}  // namespace gf::work
