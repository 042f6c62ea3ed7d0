#pragma once
// One server, built once from the node design and stamped out for every node. All nodes share
// the same local layout, so a route inside node n is the template's route with its device and
// link ids shifted by n times the per-node counts.
#include <vector>

#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"
#include "topo/graph.hpp"
#include "topo/route.hpp"

namespace gf::topo {

class NodeTemplate {
public:
  // Validates the design (parents exist, no cycles, NVLink counts fit) and builds the local graph.
  NodeTemplate(const ClusterSpec& spec, const hw::Catalog& catalog);

  // Appends node `node`'s devices and links to `g`; must be called for nodes 0, 1, 2, ... in order
  // before anything else is added.
  void instantiate(Graph& g, std::int32_t node) const;

  [[nodiscard]] std::uint32_t devices_per_node() const { return static_cast<std::uint32_t>(local_.device_count()); }
  [[nodiscard]] std::uint32_t links_per_node() const { return static_cast<std::uint32_t>(local_.link_count()); }
  [[nodiscard]] const Graph& local_graph() const { return local_; }

  [[nodiscard]] int gpus() const { return static_cast<int>(gpu_.size()); }
  [[nodiscard]] int nics() const { return static_cast<int>(nic_.size()); }
  [[nodiscard]] int sockets() const { return static_cast<int>(cpu_.size()); }
  [[nodiscard]] int storage_devices() const { return static_cast<int>(storage_.size()); }
  [[nodiscard]] DeviceId gpu(int i) const { return gpu_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] DeviceId nic(int i) const { return nic_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] DeviceId cpu(int s) const { return cpu_[static_cast<std::size_t>(s)]; }
  [[nodiscard]] DeviceId memory(int s) const { return mem_[static_cast<std::size_t>(s)]; }
  [[nodiscard]] DeviceId storage(int i) const { return storage_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] int socket_of(DeviceId local) const { return local_.device(local).socket; }
  [[nodiscard]] int nic_of_gpu(int gpu) const { return nic_of_gpu_[static_cast<std::size_t>(gpu)]; }
  // Every NIC as close to the GPU as its nearest one (NCCL spreads a GPU's channels over them),
  // starting with nic_of_gpu.
  [[nodiscard]] const std::vector<int>& near_nics(int gpu) const { return near_nics_[static_cast<std::size_t>(gpu)]; }
  [[nodiscard]] bool has_nvswitch() const { return nvswitch_ != kNone; }
  // The NVSwitch supports NVLink SHARP (in-switch reduction and multicast).
  [[nodiscard]] bool nvswitch_sharp() const { return nvswitch_sharp_; }
  [[nodiscard]] double staging_efficiency() const { return staging_efficiency_; }

  // Local routes (ids relative to the template). P2P off stages through host memory.
  [[nodiscard]] Route gpu_to_gpu(int a, int b, bool p2p) const { return gpu_route(a, b, p2p); }
  // The same without a copy.
  [[nodiscard]] const Route& gpu_route(int a, int b, bool p2p) const {
    return gpu_to_gpu_[(p2p ? gpu_.size() * gpu_.size() : 0) + static_cast<std::size_t>(a) * gpu_.size() +
                       static_cast<std::size_t>(b)];
  }
  // A DMA path between a GPU/NIC/storage device and socket s's memory. `sm_driven`: a GPU's own
  // threads load and store (NCCL's SHM transport), so a hop across sockets goes at the CPU's
  // peer rate, as SM-driven peer traffic does, not at the DMA rate.
  [[nodiscard]] Route to_memory(DeviceId from, int socket, bool sm_driven = false) const;
  [[nodiscard]] Route from_memory(int socket, DeviceId to, bool sm_driven = false) const;
  // A PCIe path between two endpoints (GPU, NIC, storage), classified PIX..SYS.
  [[nodiscard]] Route pcie_path(DeviceId from, DeviceId to) const;
  // The same between GPU `gpu` and NIC `nic` (indices), without a copy (a node with both).
  [[nodiscard]] const Route& gpu_nic_path(int gpu, int nic) const {
    return gpu_to_nic_[static_cast<std::size_t>(gpu) * nic_.size() + static_cast<std::size_t>(nic)];
  }
  [[nodiscard]] const Route& nic_gpu_path(int nic, int gpu) const {
    return nic_to_gpu_[static_cast<std::size_t>(nic) * gpu_.size() + static_cast<std::size_t>(gpu)];
  }

  // NVLink bandwidth of one GPU into the fabric (all links, achievable), zero without NVLink.
  [[nodiscard]] Bandwidth gpu_nvlink_capacity() const { return gpu_nvlink_capacity_; }
  // Achievable bisection bandwidth among the node's GPUs, one direction.
  [[nodiscard]] Bandwidth gpu_bisection() const;

private:
  static constexpr DeviceId kNone = ~DeviceId{0};

  struct TreeInfo {
    DeviceId parent = kNone;  // kNone for sockets and devices outside the PCIe tree
    LinkId uplink = 0;        // child -> parent; parent -> child is uplink + 1
    int host_bridge = 0;      // for the top attachment under a socket
  };

  DeviceId add(DeviceKind kind, int index, int socket);
  void append_up(DeviceId from, DeviceId to_ancestor_or_socket, std::vector<LinkId>& out) const;
  [[nodiscard]] DeviceId top_attachment(DeviceId d) const;  // child of the socket above d
  [[nodiscard]] DeviceId socket_device(DeviceId d) const;
  void append_cross_socket(int from, int to, std::vector<LinkId>& out, bool peer = false) const;
  [[nodiscard]] Route memory_route(DeviceId endpoint, int socket, bool towards_memory, bool sm_driven) const;
  void assign_nics_to_gpus();

  Graph local_;
  std::vector<TreeInfo> tree_;
  std::vector<DeviceId> gpu_, cpu_, mem_, nic_, storage_, pcie_switch_;
  DeviceId nvswitch_ = kNone;
  std::vector<LinkId> mem_link_;                  // cpu -> mem; mem -> cpu is +1
  std::vector<std::vector<LinkId>> socket_link_;  // [s][t]: s -> t
  // [s][t]: what peer traffic between PCIe devices crosses from s to t (the socket link itself
  // where the CPU has no separate peer rate)
  std::vector<std::vector<LinkId>> socket_peer_link_;
  std::vector<LinkId> gpu_nvswitch_link_;     // gpu -> nvswitch; back is +1
  std::vector<std::vector<int>> mesh_link_;   // [a][b]: link id a -> b, or -1
  std::vector<std::vector<int>> mesh_links_;  // [a][b]: NVLink count
  std::vector<int> nic_of_gpu_;
  std::vector<std::vector<int>> near_nics_;
  // Every GPU<->NIC PCIe path, built once the node is complete: every route across nodes takes
  // two of them, and a communicator's flows ask for them millions of times.
  std::vector<int> gpu_index_, nic_index_;      // by local device id, -1 for other devices
  std::vector<Route> gpu_to_nic_, nic_to_gpu_;  // [gpu * nics + nic], [nic * gpus + gpu]
  std::vector<Route> gpu_to_gpu_;               // [p2p * gpus^2 + a * gpus + b]
  [[nodiscard]] Route trace_pcie_path(DeviceId from, DeviceId to) const;
  [[nodiscard]] Route trace_gpu_to_gpu(int a, int b, bool p2p) const;
  void trace_routes();
  int gpu_nvlinks_ = 0;
  bool pcie_p2p_allowed_ = true;
  bool nvswitch_sharp_ = false;
  double staging_efficiency_ =
      1.0;  // host-staged copies reach this fraction of the path  // the GPU product allows PCIe peer-to-peer
  Bandwidth gpu_nvlink_capacity_;
};

}  // namespace gf::topo
