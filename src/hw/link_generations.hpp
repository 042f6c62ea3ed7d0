#pragma once
#include <string>

#include "core/units.hpp"

namespace gf::hw {

struct PcieGeneration {
  int generation = 0;
  double transfer_rate_GTps = 0;
  std::string encoding;
  Bandwidth lane_rate;           // payload per lane per direction
  double copy_efficiency = 1.0;  // achieved fraction for large DMA copies
  Seconds hop_latency;
  Seconds switch_latency;
  std::string source;
  std::string note;

  [[nodiscard]] Bandwidth line_rate(int lanes) const { return lane_rate * static_cast<double>(lanes); }
};

struct NvlinkGeneration {
  int generation = 0;
  Bandwidth link_rate;  // per link per direction
  int lanes_per_link = 0;
  int max_links = 0;
  double efficiency = 1.0;
  Seconds hop_latency;
  std::string source;
  std::string note;
};

struct NvswitchGeneration {
  int generation = 0;
  int nvlink_generation = 0;
  int ports = 0;
  bool nvls = false;
  Seconds latency;
  std::string source;
  std::string note;
};

// GPU-to-GPU copies staged through host memory when peer-to-peer is off.
struct HostStaging {
  double efficiency = 1.0;  // achieved fraction of the staged path's slowest link
  std::string source;
  std::string note;
};

}  // namespace gf::hw
