#pragma once
// The machine as hwloc sees it: packages, NUMA nodes with their memory, cores, and the PCI
// devices (with their link bandwidth and OS device names). hwloc stays behind this header so
// the rest of the probe module does not depend on its types.
#include <memory>
#include <string>
#include <vector>

#include "probe/profile.hpp"

struct hwloc_topology;

namespace gf::probe {

class HwlocTopology {
public:
  // Loads the topology with important I/O devices. Throws std::runtime_error if hwloc fails.
  HwlocTopology();
  ~HwlocTopology();
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;

  [[nodiscard]] int packages() const;
  [[nodiscard]] int cores() const;
  [[nodiscard]] int threads() const;
  [[nodiscard]] Bytes memory() const;
  [[nodiscard]] std::string cpu_model() const;  // "CPUModel" of the first package; may be empty
  [[nodiscard]] std::vector<NumaNodeInfo> numa_nodes() const;
  [[nodiscard]] std::vector<PciDeviceInfo> pci_devices() const;

  // The raw handle, for binding threads and memory (see memory_bandwidth.cpp).
  [[nodiscard]] hwloc_topology* handle() const { return topo_; }

private:
  hwloc_topology* topo_ = nullptr;
};

}  // namespace gf::probe
