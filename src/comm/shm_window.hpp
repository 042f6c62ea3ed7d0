#pragma once
// What one channel of NCCL's SHM transport moves, derived from how NCCL's kernel drives it
// (src/transport/shm.cc, src/device/prims_simple.h, src/graph/tuning.cc): the sender's threads
// store into a buffer in the receiver's host memory and the receiver's threads load it back,
// both across PCIe. A channel is one CUDA block; its loads from host memory are bounded by the
// bytes its threads keep in flight over the round trip to host memory, so the rate follows the
// block's window, not the link's width.
#include <vector>

#include "comm/nccl_params.hpp"
#include "topo/graph.hpp"

namespace gf::comm {

struct ShmWindow {
  int threads = 0;   // CUDA threads of one channel (NCCL's Simple default for the ring)
  int unroll = 0;    // 16-byte loads each thread issues before it waits (ncclCollUnroll)
  double bytes = 0;  // what the channel's data threads keep in flight
};

// NCCL's bandwidth figure for one PCIe link (ncclTopoGetXml: width x per-lane speed / 80), GB/s.
[[nodiscard]] double nccl_pcie_GBps(const NcclParams& p, const topo::Link& link);

// NCCL's ring bandwidth for rings whose hops take `routes` (one per ring edge): the slowest
// PCIe link's NCCL figure over the times one ring crosses it (the search's bwIntra x nChannels
// bound). Links that are not PCIe do not count.
[[nodiscard]] double nccl_ring_GBps(const NcclParams& p, const topo::Graph& g,
                                    const std::vector<std::vector<topo::LinkId>>& routes);

// The window of one SHM channel on a GPU of compute capability `cc` (x10) for a ring NCCL
// rates at `ring_GBps`.
[[nodiscard]] ShmWindow shm_window(const NcclParams& p, int cc, double ring_GBps);

// What one SHM channel moves, bytes/s: one crossing of host memory per round trip while each
// GPU only sends or only receives (`simplex`), two while its threads both store and load.
[[nodiscard]] double shm_channel_rate(const NcclParams& p, const ShmWindow& w, bool simplex);

}  // namespace gf::comm
