#pragma once
// A routed path between two devices, with what a user of nvidia-smi and nvbandwidth expects
// to know about it: the connection type, the transport, the bottleneck bandwidth and latency.
#include <string>
#include <vector>

#include "core/units.hpp"
#include "topo/graph.hpp"

namespace gf::topo {

// Connection types of `nvidia-smi topo -m`, plus NET for paths that leave the server.
enum class PathType { self, nvlink, pix, pxb, phb, node, sys, net };

// How the bytes actually move.
enum class Transport {
  local,           // same device
  nvlink,          // NVLink P2P, direct or through NVSwitch
  pcie_p2p,        // PCIe peer-to-peer
  host_staged,     // P2P off: copied through a bounce buffer in host memory
  pcie_dma,        // GPU <-> host memory or GPU <-> NIC/storage DMA over PCIe
  gpudirect_rdma,  // NIC reads/writes GPU memory directly
  host_bounce,     // between servers through host memory at both ends (no GPUDirect, or TCP)
  pxn,             // between servers over NVLink to a peer GPU, whose NIC reads it (NCCL's PXN)
};

const char* to_string(PathType t);
const char* to_string(Transport t);

struct Route {
  std::vector<LinkId> links;
  PathType type = PathType::self;
  int nvlinks = 0;  // NVLink count for NV#
  Transport transport = Transport::local;
  Bandwidth bandwidth;  // achievable bottleneck, one direction (host-staged: times the staging efficiency)
  Bandwidth line_rate;  // line rate of the bottleneck link
  Seconds latency;      // one-way hardware latency of the path
  int ecmp_paths = 1;   // equal-cost alternatives in the network (1 inside a server)

  // "NV18", "PIX", "SYS", "NET", "X"
  [[nodiscard]] std::string label() const;
};

// Fills bandwidth, line_rate and latency from the links.
void measure(Route& r, const Graph& g);

}  // namespace gf::topo
