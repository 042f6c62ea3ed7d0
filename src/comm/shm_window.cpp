#include "comm/shm_window.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace gf::comm {

double nccl_pcie_GBps(const NcclParams& p, const topo::Link& link) {
  // The generation from the link's per-lane line rate (0.985 GB/s at Gen3, doubling each one).
  const double lane = link.line_rate.value() / 1e9 / std::max<int>(1, link.lanes);
  const int gen = 3 + static_cast<int>(std::lround(std::log2(lane / 0.985)));
  const auto& table = p.shm.nccl_lane_GBps;
  auto it = table.lower_bound(gen);
  if (it == table.end()) it = std::prev(table.end());
  return it->second * std::max<int>(1, link.lanes);
}

double nccl_ring_GBps(const NcclParams& p, const topo::Graph& g, const std::vector<std::vector<topo::LinkId>>& routes) {
  std::map<topo::LinkId, int> crossings;
  for (const auto& r : routes) {
    for (const auto l : r) {
      if (g.link(l).kind == topo::LinkKind::pcie) ++crossings[l];
    }
  }
  double bw = std::numeric_limits<double>::infinity();
  for (const auto& [l, n] : crossings) bw = std::min(bw, nccl_pcie_GBps(p, g.link(l)) / n);
  return bw;
}

ShmWindow shm_window(const NcclParams& p, int cc, double ring_GBps) {
  const auto& s = p.shm;
  ShmWindow w;
  // tuning.cc: "bwIntra * nChannels <= PCI_BW ? 256 : NCCL_SIMPLE_MAX_NTHREADS".
  w.threads = ring_GBps <= s.pci_bw_GBps ? s.low_bw_threads : s.threads;
  // device.h ncclCollUnroll: by the GPU's major compute capability.
  const int major = cc / 10;
  auto it = s.unroll.upper_bound(major);
  w.unroll = it == s.unroll.begin() ? s.unroll.begin()->second : std::prev(it)->second;
  // prims_simple.h: one warp synchronises instead of moving data once there are 3 warps.
  const int data_threads = w.threads - s.sync_threads;
  w.bytes = static_cast<double>(data_threads) * w.unroll * s.load_bytes;
  return w;
}

double shm_channel_rate(const NcclParams& p, const ShmWindow& w, bool simplex) {
  const double trip = p.shm.round_trip_us * 1e-6 * (simplex ? 1 : 2);
  return w.bytes / trip;
}

}  // namespace gf::comm
