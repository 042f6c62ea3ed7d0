#pragma once
// The cluster as the scheduler holds it: nodes with their CPU, memory and GPUs, what each GPU
// has left (a thousandths share for GPU-sharing pods, or MIG instances), and where each node
// and GPU sits (leaf switch; socket and nearest NIC inside the node), for topology-aware
// placement. Allocation and release keep the totals that the metrics read.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/job.hpp"
#include "sched/mig_layout.hpp"

namespace gf::topo {
class Topology;
}

namespace gf::sched {

struct GpuSlot {
  int free_milli = 1000;      // thousandths left for whole-GPU and GPU-sharing pods
  int socket = 0;             // CPU socket the GPU hangs off
  int nic = 0;                // its nearest NIC (GPUs with the same one share a PCIe switch)
  std::optional<MigGpu> mig;  // set while the GPU is in MIG mode (it has instances)
};

struct Node {
  std::string name;
  std::string model;  // GPU model, as the trace or the catalog names it
  long cpu_milli = 0, memory_mib = 0;
  long cpu_free = 0, memory_free = 0;
  std::vector<GpuSlot> gpus;
  long leaf = -1;                       // leaf switch; -1 when unknown (a trace's node list says nothing)
  long first_gpu = -1;                  // global index of its first GPU in the topology, when built from one
  const MigTable* mig_table = nullptr;  // the GPU's MIG profiles; nullptr: no MIG
  bool nvswitch = false;                // every GPU pair joined by NVSwitch

  [[nodiscard]] int whole_free() const;         // GPUs entirely free (not in MIG mode)
  [[nodiscard]] long free_milli_total() const;  // thousandths free over all GPUs (MIG slices not counted)
};

// Where one pod runs: its node and GPUs; with a share, the thousandths it takes of its GPU; with
// MIG, the instance's profile and start slice on its GPU.
struct PodPlacement {
  int node = -1;
  std::vector<int> gpus;
  int milli = 0;  // per GPU in `gpus`
  int mig_profile = -1;
  int mig_start = -1;
};
using Placement = std::vector<PodPlacement>;  // one per pod of the job

class ClusterState {
public:
  ClusterState() = default;
  explicit ClusterState(std::vector<Node> nodes);

  [[nodiscard]] const std::vector<Node>& nodes() const { return nodes_; }
  [[nodiscard]] const Node& node(int i) const { return nodes_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] long gpu_count() const { return gpus_; }
  [[nodiscard]] long leaves() const { return leaves_; }
  // Allocated thousandths of GPUs over the cluster (whole GPUs 1000 each, shares, MIG slices as
  // compute slices / 7).
  [[nodiscard]] long allocated_milli() const { return allocated_milli_; }
  // GPUs with anything on them.
  [[nodiscard]] long gpus_in_use() const { return in_use_; }
  // Changes made to this state (copied with it): a deterministic count.
  [[nodiscard]] std::uint64_t version() const { return version_; }
  // A stamp unique across every ClusterState in the process, renewed when the node changes: two
  // nodes with the same stamp are in the same state, even in different copies (what caches of
  // per-node results key on).
  [[nodiscard]] std::uint64_t node_version(int node) const { return node_version_[static_cast<std::size_t>(node)]; }

  // Whether the node's GPU model is one the pod accepts, and CPU and memory are left for it.
  [[nodiscard]] bool host_fits(int node, const PodRequest& p) const;
  // Every way to place one pod on a node (GPU choices; MIG starts), the cheap checks first.
  // Whole GPUs: the lowest-numbered free ones, or with `local` the set closest together.
  void options(int node, const PodRequest& p, bool local, std::vector<PodPlacement>& out) const;
  // Whether the pod could ever run on the node (the node empty).
  [[nodiscard]] bool could_ever_fit(int node, const PodRequest& p) const;

  void allocate(const PodRequest& p, const PodPlacement& where);
  void release(const PodRequest& p, const PodPlacement& where);

private:
  void touch(int node);
  std::vector<Node> nodes_;
  std::vector<std::uint64_t> node_version_;
  long gpus_ = 0;
  long leaves_ = 0;
  long allocated_milli_ = 0;
  long in_use_ = 0;
  std::uint64_t version_ = 0;
};

// MIG slices of a profile as thousandths of a GPU: its compute slices over 7 ("3g" is 3/7).
int mig_milli(const std::string& profile);

// The nodes of a built cluster: one per server, with its GPU model, sockets, NIC affinity and
// leaf switch from the topology. CPU and memory from the preset's CPU model; `cpu_milli` and
// `memory_mib` override them (0: from the catalog).
std::vector<Node> nodes_from_topology(const topo::Topology& t, long cpu_milli = 0, long memory_mib = 0);

}  // namespace gf::sched
