#pragma once
// A set of ranks on a topology, as NCCL sees it: which GPUs, how many per node, the link
// capacities NCCL's kernels reach, and which algorithms the hardware supports.
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "comm/nccl_config.hpp"
#include "comm/nccl_params.hpp"
#include "comm/transport.hpp"
#include "topo/topology.hpp"

namespace gf::comm {

// NCCL's GPU generations (its compCapIndex): the index of its tables by GPU.
enum class GpuGeneration { volta = 0, ampere = 1, hopper = 2, blackwell = 3 };

class Communicator {
public:
  // `ranks` spread evenly over the cluster's nodes (like mpirun -npernode); 0 = every GPU.
  // `env` is the NCCL environment the ranks run under (transport levels, channels). `params`
  // are NCCL's constants and gpufabric's calibrated efficiencies (the built-in set unless given,
  // e.g. a calibration overlay); they must outlive the communicator.
  Communicator(const topo::Topology& t, long ranks, NcclConfig env = {}, const NcclParams* params = nullptr);
  // Ranks on exactly these GPUs (global indices, node * gpus_per_node + local): a tensor-parallel
  // group inside a node, a data-parallel group along one rail, a pipeline stage's nodes. Every
  // node in the list must hold the same number of them (gpufabric's patterns, like NCCL's
  // rings, run node by node); ranks are numbered node by node in the order of the GPUs.
  Communicator(const topo::Topology& t, std::vector<long> gpus, NcclConfig env = {},
               const NcclParams* params = nullptr);

  [[nodiscard]] const topo::Topology& topology() const { return t_; }
  [[nodiscard]] long ranks() const { return ranks_; }
  [[nodiscard]] long nodes() const { return nodes_; }
  [[nodiscard]] int ranks_per_node() const { return ppn_; }
  // The global GPU index of a rank, and its index inside its node.
  [[nodiscard]] long gpu_of(long rank) const { return gpus_[static_cast<std::size_t>(rank)]; }
  [[nodiscard]] int local_gpu(long rank) const { return static_cast<int>(gpu_of(rank) % t_.gpus_per_node()); }
  // The communicator's node of a rank (0 .. nodes()-1), and the cluster node it is.
  [[nodiscard]] long node_of(long rank) const { return rank / ppn_; }
  [[nodiscard]] long cluster_node(long node) const { return gpu_of(node * ppn_) / t_.gpus_per_node(); }
  // `nic_choice` selects among the GPUs' equally near NICs for traffic between nodes.
  // Traffic between leaves is spread over all equal-cost uplinks (NCCL opens several queue
  // pairs per connection, and fabrics route adaptively), so routes use the uplink bundles.
  // The route follows the transport NCCL picks for the pair: SHM goes through the receiver's
  // host memory, and a network transport without GPUDirect through host memory at both ends.
  [[nodiscard]] topo::Route route(long a, long b, int nic_choice = 0) const;
  // The transport NCCL connects rank a to rank b with (between nodes, a's send side).
  [[nodiscard]] NcclTransport transport(long a, long b) const;
  // What one connection (one channel to one peer) can move, bytes/s, where the transport has
  // such a limit (SHM's GPU loads and stores through host memory, a TCP stream driven by NCCL's
  // proxy thread); infinity otherwise.
  // `simplex`: each GPU only sends or only receives over SHM in this operation (a chain of two
  // ranks); otherwise its threads store and load across PCIe at once, which is slower.
  [[nodiscard]] double connection_rate(long a, long b, bool simplex = false) const;
  [[nodiscard]] const NcclConfig& env() const { return env_; }
  [[nodiscard]] const NcclParams& params() const { return *params_; }
  // The transports in use, one line per class of edge, as NCCL_DEBUG=INFO names them.
  [[nodiscard]] std::vector<std::string> transport_summary() const;
  // Where the environment or the hardware overrode what was asked for (P2P refused by the
  // driver, ...): lines for the output's warnings.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

  // The time per byte of a pattern's traffic at the Simple protocol's steady rate, computed
  // once per (op, algorithm, root, engine, view) and reused: max-min completion times scale
  // with bytes for a fixed set of flows, so the data term is linear in the size. Thread-safe.
  [[nodiscard]] double data_seconds_per_byte(int op, int algo, long root, bool flow, bool fabric,
                                             const std::function<double()>& compute_per_byte) const;
  // Link capacities in bytes/s as NCCL's kernels reach them (NVLink at NCCL's SM-copy
  // efficiency; everything else as the topology has it).
  [[nodiscard]] const std::vector<double>& capacity() const;
  [[nodiscard]] double link_capacity(topo::LinkId l) const;

  [[nodiscard]] HopKind intra_hop() const { return nvlink_intra_ ? HopKind::nvlink : HopKind::pcie; }
  [[nodiscard]] bool nvlink_intra() const { return nvlink_intra_; }
  [[nodiscard]] bool nvls_capable() const { return nvls_; }
  [[nodiscard]] bool sharp_capable() const { return sharp_; }
  [[nodiscard]] int nics_per_node() const { return t_.node().nics(); }
  [[nodiscard]] GpuGeneration gpu_generation() const { return generation_; }
  [[nodiscard]] bool amd_cpu() const { return amd_cpu_; }
  // The order of a node's local ranks around NCCL's rings. On an NVSwitch or PCIe node it is
  // 0, 1, ..., p-1; on a direct NVLink mesh (DGX-1's hybrid cube-mesh) it is the Hamiltonian
  // cycle with the fastest slowest hop, as NCCL's ring search finds.
  // On a mesh, channel pairs take different cycles: each next cycle is the best one on the
  // NVLink capacity the previous cycles left, as NCCL's search spreads its rings over links.
  [[nodiscard]] const std::vector<int>& intra_ring(int channel = 0) const {
    return intra_rings_[static_cast<std::size_t>(channel / (bidirectional_rings_ ? 2 : 1)) % intra_rings_.size()];
  }
  // Whether channels alternate the ring's direction (on a mesh, to use both directions of
  // every NVLink).
  [[nodiscard]] bool bidirectional_rings() const { return bidirectional_rings_; }
  // One line on the hardware, for output headers.
  [[nodiscard]] std::string describe() const;

private:
  const topo::Topology& t_;
  NcclConfig env_;
  const NcclParams* params_;
  std::vector<long> gpus_;                      // global GPU index by rank
  std::vector<NcclTransport> intra_transport_;  // ppn x ppn, by local rank
  std::vector<int> intra_via_;  // ppn x ppn: the local rank a P2P/indirect (PATH_NVB) pair goes through, or -1
  // How each local rank reaches the network (by local rank): the NICs NCCL picks for it in
  // channel order, and for each the local GPU that relays its sends over NVLink (PXN), or -1.
  struct NetSide {
    NcclTransport send = NcclTransport::net_gdr;
    bool recv_gdr = true;  // the NIC writes straight into this GPU's memory
    std::vector<int> nics;
    std::vector<int> proxies;
  };
  std::vector<NetSide> net_;
  std::vector<std::string> notes_;
  mutable std::mutex cache_mutex_;
  mutable std::map<std::tuple<int, int, long, bool, bool>, double> data_cache_;
  long ranks_ = 0;
  long nodes_ = 0;
  int ppn_ = 0;
  mutable std::vector<double> capacity_;
  mutable std::once_flag capacity_once_;
  std::optional<double> nvlink_efficiency_;  // NCCL's SM-copy fraction of NVLink line rate
  double net_scale_ = 1.0;                   // a calibration's network efficiency / the catalog's
  bool nvlink_intra_ = false;
  bool nvls_ = false;
  bool sharp_ = false;
  GpuGeneration generation_ = GpuGeneration::hopper;
  bool amd_cpu_ = false;
  std::vector<std::vector<int>> intra_rings_;
  bool bidirectional_rings_ = false;
  int channels_hint_ = 2;

  void finish();  // what both constructors share once the ranks are placed
  void search_intra_ring();
  void choose_transports();
  void apply_network_profile();  // the network's NCCL variables under the user's
  void choose_net_transports();
  // The local rank both `a` and `b` have an NVLink to (NCCL's PATH_NVB), or -1.
  [[nodiscard]] int nvlink_intermediate(int a, int b) const;
  void summarize_net(const std::string& net_name, std::vector<std::string>& out) const;
  [[nodiscard]] NetSide net_side(int local_rank, PathLevel gdr_level, bool pxn) const;
};

}  // namespace gf::comm
