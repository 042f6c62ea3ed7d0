#pragma once
// `gpufabric topo` output: an nvidia-smi-style connection matrix, nvbandwidth-style predicted
// bandwidth and latency matrices, host and NIC paths, and a summary; or JSON, or Graphviz DOT.
#include <string>

#include "topo/topology.hpp"

namespace gf::report {

// Clusters up to this many GPUs list every GPU pair in JSON; larger ones list node 0's pairs
// and one example per pair class.
inline constexpr long kAllPairsLimit = 64;
// DOT output is for looking at, so it is refused past this many devices.
inline constexpr std::size_t kDotDeviceLimit = 5000;

std::string topo_text(const topo::Topology& t);
std::string topo_json(const topo::Topology& t);
std::string topo_dot(const topo::Topology& t);

}  // namespace gf::report
