#pragma once
// A built cluster: the device graph of every server and the network, with routing between any
// two GPUs, a GPU and host memory, or a GPU and a NIC.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"
#include "topo/graph.hpp"
#include "topo/network_fabric.hpp"
#include "topo/node_template.hpp"
#include "topo/route.hpp"

namespace gf::topo {

// The largest cluster gpufabric builds; beyond it the graph would not fit comfortably in
// memory on a workstation, and no public machine is that large in one fabric.
inline constexpr long kMaxGpus = 100'000;

class Topology {
public:
  Topology(ClusterSpec spec, const hw::Catalog& catalog);

  [[nodiscard]] const ClusterSpec& spec() const { return spec_; }
  [[nodiscard]] const Graph& graph() const { return graph_; }
  [[nodiscard]] const NodeTemplate& node() const { return *node_; }
  [[nodiscard]] const NetworkFabric* fabric() const { return fabric_ ? &*fabric_ : nullptr; }
  [[nodiscard]] const hw::GpuSpec& gpu_spec() const { return gpu_; }
  [[nodiscard]] const hw::CpuSpec& cpu_spec() const { return cpu_; }
  [[nodiscard]] const hw::NetworkTech& network() const { return network_; }
  [[nodiscard]] const hw::SwitchSpec& network_switch() const { return switch_; }
  // What the overrides and defaults did that the user may not expect, one sentence each, for
  // the header of every command's output; warnings start with "warning: ".
  [[nodiscard]] const std::vector<std::string>& notes() const { return spec_.notes; }

  [[nodiscard]] long nodes() const { return spec_.nodes; }
  [[nodiscard]] int gpus_per_node() const { return node_->gpus(); }
  [[nodiscard]] long gpu_count() const { return spec_.nodes * node_->gpus(); }
  [[nodiscard]] DeviceId gpu(long global) const;
  [[nodiscard]] DeviceId nic(long node, int nic) const;

  // Routes between GPUs by global index (node * gpus_per_node + local).
  [[nodiscard]] Route route_gpus(long a, long b) const { return route_gpus(a, b, 0); }
  // Between nodes, `channel` picks which of each GPU's nearest NICs carries the traffic
  // (channel 0 is nic_of_gpu), as NCCL spreads its channels over a GPU's NICs.
  [[nodiscard]] Route route_gpus(long a, long b, int channel, bool ideal_ecmp = false) const {
    return route_gpus(a, b, channel, ideal_ecmp, gpudirect_active());
  }
  // `gdr` false: between servers the data is staged in host memory at both ends (no GPUDirect
  // RDMA for this pair, as NCCL decides with NCCL_NET_GDR_LEVEL, or a TCP transport).
  [[nodiscard]] Route route_gpus(long a, long b, int channel, bool ideal_ecmp, bool gdr) const;
  // One end of a route between servers: the NIC that carries it, whether the NIC reads or
  // writes GPU memory directly (GPUDirect RDMA) or through a buffer in host memory, and, on the
  // sending side, the local GPU that relays the data over NVLink to that NIC (NCCL's PXN), or -1.
  struct NetEnd {
    int nic = 0;
    bool gdr = true;
    int proxy = -1;
  };
  // GPU a to GPU b on another server through the given ends (a's end sends, b's end receives).
  [[nodiscard]] Route route_gpus(long a, NetEnd from, long b, NetEnd to, bool ideal_ecmp) const;
  // GPU to/from host memory of socket `socket` in the same server.
  // `sm_driven`: the GPU's threads load and store (NCCL's SHM transport; NodeTemplate::to_memory).
  [[nodiscard]] Route route_gpu_to_memory(long gpu, int socket, bool sm_driven = false) const;
  [[nodiscard]] Route route_memory_to_gpu(int socket, long gpu, bool sm_driven = false) const;
  // GPU to NIC `nic` of the same server (the GPUDirect RDMA path).
  [[nodiscard]] Route route_gpu_to_nic(long gpu, int nic) const;
  [[nodiscard]] Route route_nic_to_gpu(int nic, long gpu) const;

  // Whether traffic between servers is RDMA straight from GPU memory.
  [[nodiscard]] bool gpudirect_active() const;
  // Whether NCCL may use its LL / LL128 protocols between servers (every NIC allows them).
  [[nodiscard]] bool network_ll_protocols() const { return ll_protocols_; }

private:
  void plan_fabric(Bandwidth nic_rate);
  void warn_pcie_capped_nics();
  [[nodiscard]] Route shift(Route r, long node) const;  // template ids -> node `node`
  int route_network(long na, int ra, long nb, int rb, long a, long b, bool ideal_ecmp, std::vector<LinkId>& out) const;
  void append_shifted(const std::vector<LinkId>& local, long node, std::vector<LinkId>& out) const;

  ClusterSpec spec_;
  hw::GpuSpec gpu_;
  hw::CpuSpec cpu_;
  hw::NetworkTech network_;
  hw::SwitchSpec switch_;
  std::unique_ptr<NodeTemplate> node_;
  std::optional<NetworkFabric> fabric_;
  Graph graph_;
  bool ll_protocols_ = true;
};

}  // namespace gf::topo
