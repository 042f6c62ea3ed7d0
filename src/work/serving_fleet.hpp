#pragma once
// Replicas of one layout on a cluster, and the sizing of a fleet: for each candidate layout (TP x
// PP), the highest Poisson rate one replica serves within the latency goals, the replicas a
// target rate needs, and a check of that fleet under the whole rate. The layout that needs the
// fewest GPUs wins.
#include <memory>
#include <string>
#include <vector>

#include "topo/topology.hpp"
#include "work/kv_transfer.hpp"
#include "work/serving_summary.hpp"

namespace gf::work {

// Instances per unit of disaggregated serving (0:0 is co-located serving).
struct DisaggregatedSpec {
  long prefill = 0;
  long decode = 0;
  [[nodiscard]] bool on() const { return prefill > 0 && decode > 0; }
  [[nodiscard]] long instances() const { return on() ? prefill + decode : 1; }
};

// Replicas of one layout placed on the cluster's GPUs in order (replica i on GPUs i x TP x PP
// onwards, wrapping when the fleet is larger than the cluster: the nodes are alike). With
// disaggregation, `units` units of P prefill and D decode instances: all prefill instances
// first, then the decode ones, each pool behind its own balancer.
class ReplicaSet {
public:
  ReplicaSet(TrainingContext& context, const ModelSpec& m, const ReplicaSpec& r, long units,
             DisaggregatedSpec disaggregated = {}, double typical_prompt = 1024,
             const BackgroundJob* background = nullptr);
  [[nodiscard]] const std::vector<InferenceCost*>& replicas() const { return view_; }
  [[nodiscard]] InferenceCost& first() const { return *costs_.front(); }
  [[nodiscard]] const KvTransfer* transfer() const { return transfer_.get(); }
  [[nodiscard]] long gpus() const { return static_cast<long>(view_.size()) * costs_.front()->replica().gpus(); }
  [[nodiscard]] ServingRun run(const std::vector<Request>& requests, long concurrency,
                               const SimulationOptions& options) const;

private:
  std::vector<std::unique_ptr<InferenceCost>> costs_;  // one per distinct GPU set
  std::vector<InferenceCost*> view_;
  std::unique_ptr<KvTransfer> transfer_;
  long prefill_ = 0;
};

struct LayoutSizing {
  ReplicaSpec replica;
  DisaggregatedSpec disaggregated;  // units of P prefill + D decode instances; off: replicas
  bool fits = false;                // the model fits and a lone replica can meet the goals
  std::string why_not;
  double replica_rate = 0;  // requests/s one replica serves within the goals
  long replicas = 0;        // replicas, or units when disaggregated
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
// `disaggregated`, when on, adds for each candidate layout units of P prefill + D decode
// instances of it, sized the same way (a unit stands where a replica stood).
FleetSizing size_fleet(TrainingContext& context, const ModelSpec& m, const std::vector<ReplicaSpec>& candidates,
                       const LoadSpec& load, double rate, const SloSpec& slo, const SizingOptions& options,
                       DisaggregatedSpec disaggregated = {});

}  // namespace gf::work
