#pragma once
// A scheduling policy: how the queue is served and where a pod goes. The simulator enumerates
// every way to place a pod on every allowed node and keeps the option the policy scores lowest;
// a gang's pods are placed one after another, all or none.
//
// Adding a policy is one file in src/sched/policies/ (and its line in CMakeLists.txt's
// GPUFABRIC_POLICIES): a class deriving from Policy, and
//   const bool registered = gf::sched::register_policy("my-policy", [] { return std::make_unique<MyPolicy>(); });
// The README's "Writing a scheduling policy" shows a whole one.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/fragmentation.hpp"
#include "sched/job.hpp"

namespace gf::sched {

// How the pending queue is served, in arrival order unless said otherwise.
enum class Queueing {
  skip,      // a pod that does not fit waits, later ones may go (kube-scheduler's queue)
  fifo,      // the first pod that does not fit blocks all behind it (strict FIFO)
  backfill,  // strict FIFO with EASY backfill: later jobs run if they do not delay the first
  las,       // least attained service first (Tiresias' 2D-LAS), preempting to make room
};

// What a policy sees when it scores.
struct PlacementContext {
  const ClusterState& cluster;
  const TargetWorkload& workload;
  double now = 0;
};

class Policy {
public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::string summary() const = 0;  // one line: what it does and whose it is
  [[nodiscard]] virtual Queueing queueing() const { return Queueing::skip; }
  // Pick whole GPUs inside a node close together (same PCIe switch, then socket) rather than
  // the lowest-numbered free ones.
  [[nodiscard]] virtual bool local_gpus() const { return false; }
  // The nodes the job's pods may go to, best first (ties broken by the score); empty: all of
  // them. Topology-aware policies narrow a gang to one node, one leaf switch, or fewest leaves.
  [[nodiscard]] virtual std::vector<int> nodes_for(const Job& j, const PlacementContext& c) const;
  // One option for one pod: lower is better.
  [[nodiscard]] virtual double score(const PodPlacement& option, const PodRequest& pod,
                                     const PlacementContext& c) const = 0;
};

// Places every pod of the job on `c` where the policy scores best, all or none; allocates them
// on `c` and returns where they went, or nullopt (and `c` as it was).
std::optional<Placement> place_job(ClusterState& c, const Job& j, const Policy& p, const TargetWorkload& w, double now);

using PolicyFactory = std::function<std::unique_ptr<Policy>()>;
bool register_policy(const std::string& name, PolicyFactory make);
// The policy of that name; an InputError naming `flag` and listing the policies otherwise.
std::unique_ptr<Policy> make_policy(const std::string& name, const std::string& flag = "--policy");
std::vector<std::string> policy_names();  // sorted as --compare prints them

}  // namespace gf::sched
