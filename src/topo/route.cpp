#include "topo/route.hpp"

#include <limits>

namespace gf::topo {

const char* to_string(PathType t) {
  switch (t) {
    case PathType::self: return "X";
    case PathType::nvlink: return "NV";
    case PathType::pix: return "PIX";
    case PathType::pxb: return "PXB";
    case PathType::phb: return "PHB";
    case PathType::node: return "NODE";
    case PathType::sys: return "SYS";
    case PathType::net: return "NET";
  }
  return "?";
}

const char* to_string(Transport t) {
  switch (t) {
    case Transport::local: return "local";
    case Transport::nvlink: return "nvlink";
    case Transport::pcie_p2p: return "pcie-p2p";
    case Transport::host_staged: return "host-staged";
    case Transport::pcie_dma: return "pcie-dma";
    case Transport::gpudirect_rdma: return "gpudirect-rdma";
    case Transport::host_bounce: return "host-bounce";
    case Transport::pxn: return "pxn";
  }
  return "?";
}

std::string Route::label() const {
  if (type == PathType::nvlink) return "NV" + std::to_string(nvlinks);
  return to_string(type);
}

void measure(Route& r, const Graph& g) {
  if (r.links.empty()) {
    r.bandwidth = Bandwidth(std::numeric_limits<double>::infinity());
    r.line_rate = r.bandwidth;
    r.latency = Seconds(0);
    return;
  }
  double cap = std::numeric_limits<double>::infinity();
  double line = cap;
  double lat = 0;
  for (const LinkId id : r.links) {
    const Link& l = g.link(id);
    if (l.capacity.value() < cap) {
      cap = l.capacity.value();
      line = l.line_rate.value();
    }
    lat += l.latency.value();
  }
  r.bandwidth = Bandwidth(cap);
  r.line_rate = Bandwidth(line);
  r.latency = Seconds(lat);
}

}  // namespace gf::topo
