#pragma once
#include <map>
#include <optional>
#include <string>

#include "core/units.hpp"
#include "hw/pcie_link.hpp"

namespace gf::hw {

// The GPU's scale-up ports: NVLink (generation 1..5) or AMD xGMI (generation 0, own rate).
struct ScaleUpPorts {
  int generation = 0;  // 0 = xGMI
  int links = 0;
  std::optional<Bandwidth> link_rate;  // per link per direction; set for xGMI
};

struct GpuSpec {
  std::string name;
  std::string display_name;
  std::string vendor;
  // What `nvidia-smi` reports as the total (the part of the DRAM the driver leaves to CUDA): the
  // memory every model budgets against. `nominal_memory` is the product name's figure (80 GB).
  Bytes memory;
  Bytes nominal_memory;
  std::string memory_source;      // the public nvidia-smi output `memory` is read from
  bool memory_estimated = false;  // no such output found: derived as memory_source says
  Bandwidth memory_bandwidth;
  std::map<std::string, double> tflops_dense;  // precision -> dense TFLOPS
  std::optional<ScaleUpPorts> nvlink;
  PcieLink pcie;
  Watts tdp;
  bool mig_supported = false;
  int mig_max_instances = 0;
  bool p2p_supported = true;
  int compute_capability = 0;  // NVIDIA's sm version x 10 + minor (sm_90 = 90); 0 where not NVIDIA
  std::string source;
  std::string note;
};

}  // namespace gf::hw
