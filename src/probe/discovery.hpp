#pragma once
// Hardware discovery: hwloc for packages, NUMA nodes, cores and PCI devices; NVML (when the
// driver is there) or sysfs for GPUs and their PCIe links; sysfs for NIC and InfiniBand speeds.
#include <memory>
#include <string>

#include "probe/profile.hpp"

namespace gf::probe {

class HwlocTopology;
class Nvml;

// `nvml` receives the opened library (or nullptr) so later steps can re-read the links under load.
Discovery discover(const HwlocTopology& topology, const std::string& root, std::unique_ptr<Nvml>& nvml);

}  // namespace gf::probe
