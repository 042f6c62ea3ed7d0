#pragma once
// Whole-cluster figures: counts, per-GPU bandwidths, bisection, and one example route for each
// class of GPU pair, so a 16k-GPU cluster can be described without a 16k x 16k matrix.
#include <array>
#include <string>
#include <vector>

#include "topo/topology.hpp"

namespace gf::topo {

struct PairClass {
  std::string name;  // "same node", "same leaf switch", "same pod", "across spine", "across core"
  long src = 0;
  long dst = 0;
  Route route;
};

// A count per value of an enum that ends in kCount, indexed by the enum itself: the array grows
// with the enum, and no caller casts a kind to an index (a literal size here once fell two kinds
// behind the enums and every multi-tier fabric wrote past its end).
template <typename Kind>
class CountByKind {
public:
  std::size_t& operator[](Kind k) { return counts_[static_cast<std::size_t>(k)]; }
  std::size_t operator[](Kind k) const { return counts_[static_cast<std::size_t>(k)]; }

private:
  std::array<std::size_t, static_cast<std::size_t>(Kind::kCount)> counts_{};
};

struct TopologySummary {
  long nodes = 0;
  long gpus = 0;
  std::size_t devices = 0;  // hardware only (no fabric planes)
  std::size_t links = 0;    // directed, hardware only (no bundles)
  CountByKind<LinkKind> links_by_kind;
  CountByKind<DeviceKind> devices_by_kind;
  Bandwidth gpu_nvlink;                // per GPU, achievable, one direction
  Bandwidth node_gpu_bisection;        // among one node's GPUs
  Bandwidth node_injection_line;       // all compute NICs of one node, line rate
  Bandwidth node_injection;            // achievable: each NIC at the lesser of network and PCIe rate
  bool injection_pcie_capped = false;  // some NIC's PCIe path carries less than the network
  Bandwidth bisection_line;            // whole network
  Bandwidth bisection;                 // achievable
  FabricShape fabric;
  std::vector<PairClass> classes;
};

TopologySummary summarize(const Topology& t);

}  // namespace gf::topo
