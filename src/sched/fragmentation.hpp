#pragma once
// GPU fragmentation as FGD measures it (Weng et al., "Beware of Fragmentation", USENIX ATC '23,
// section 3): for a target workload, a mix of task classes by popularity, a node's fragmentation
// is the expected share of its free GPU capacity that the next task could not use. For one task
// class: all of the node's free GPU capacity when the task cannot run there at all (too little
// CPU, memory or GPU, or the wrong GPU model); else the free capacity of the GPUs too full to
// serve it (for a share of a GPU, GPUs with less left than the share; for whole GPUs, GPUs
// partly taken). Memory is not considered, as in the authors' simulator; tasks without GPUs
// (which the artifact counts, every free GPU a fragment to them) are left out of the mix: they
// add the same to every choice, so FGD decides alike, and the measure reads as GPU waste. Written from the paper's
// definition and the artifact's description.
#include <array>
#include <cstdint>
#include <vector>

#include "sched/cluster_state.hpp"
#include "sched/job.hpp"

namespace gf::sched {

struct TaskClass {
  PodRequest pod;     // its CPU request, GPU ask and allowed models
  double weight = 0;  // its share of the GPU tasks
};

struct TargetWorkload {
  std::vector<TaskClass> classes;
};

// The GPU task classes of a trace (CPU request, whole GPUs, share, MIG profile, allowed models), the
// most popular first until they cover `coverage` of the pods (the FGD artifact keeps 95%:
// hkust-adsl/kubernetes-scheduler-simulator, --pod-popularity-threshold 95), weighted by pods.
TargetWorkload target_workload(const std::vector<Job>& jobs, double coverage = 0.95);

// What fragmentation reads of a node: its model, CPU and memory left, and each GPU's thousandths
// left (GPUs in MIG mode count as having none left for these tasks).
struct NodeView {
  const Node* node = nullptr;
  long cpu_free = 0;
  long memory_free = 0;
  int gpus = 0;
  std::array<int, 64> free{};
};
NodeView view(const Node& n);
// Expected fragmented thousandths of a GPU on the node under the workload.
double fragmentation(const NodeView& v, const TargetWorkload& w);

// The cluster's fragmentation, kept per node and recomputed only where a node changed.
class FragmentationMeter {
public:
  explicit FragmentationMeter(const TargetWorkload& w) : w_(w) {}
  // Fragmented GPUs over the cluster (thousandths / 1000).
  double gpus(const ClusterState& c);

private:
  const TargetWorkload& w_;
  std::vector<std::uint64_t> seen_;
  std::vector<double> per_node_;
  double total_ = 0;
};

}  // namespace gf::sched
