#pragma once
// NCCL's latency constants and protocol facts (data/comm/nccl.yaml), plus the measured
// efficiencies of NCCL's data movement, each with its source.
#include <map>
#include <optional>
#include <string>

#include "comm/collective.hpp"

namespace gf::comm {

enum class HopKind { nvlink = 0, pcie = 1, net = 2 };

struct NcclParams {
  std::string source;
  // base[algo][proto], hop[kind][algo][proto], microseconds; negative = not defined
  double base[kAlgoCount][kProtoCount];
  double hop[3][kAlgoCount][kProtoCount];
  double payload[3];  // wire-byte payload fraction per protocol
  // Bus-bandwidth factor of each protocol relative to Simple: [table][proto], tables ring,
  // ring_other (not all_reduce, one node), tree, tree_single_node.
  double factor[4][3];
  // LL bus-bandwidth caps, GB/s: single node [volta, ampere, hopper]; [2 nodes / more][intel, amd]
  double ll_cap_single[3];
  // Ring LL128's factor with one GPU per node (NCCL: 0.7 instead of 0.92), and CollNetDirect's
  // arity serialization per local rank, us.
  double ll128_one_gpu_per_node = 0.7;
  double collnet_arity_us = 0.4;
  double ll_cap_multi[2][2];
  // NCCL moves NVLink data with SM loads/stores: the achieved fraction of line rate, by NVLink
  // generation.
  std::map<int, double> nvlink_efficiency;
  // NVLS all-reduce algbw as a fraction of one GPU's NVLink line rate, by NVLink generation.
  std::map<int, double> nvls_efficiency;
  double launch_overhead_us = 0.0;  // per collective call, as nccl-tests times it
  double launch_per_gpu_us = 0.0;   // serial launch per extra GPU one thread drives (nccl-tests -g)
  double net_reference_latency_us = 1.0;
  // What an NVLS all_reduce's fixed part takes (the table's figure is for the tuner):
  // base + per_rank x (ranks - 1).
  double nvls_latency_base_us = 0.0;
  double nvls_latency_per_rank_us = 0.0;  // endpoint
                                          // latency of the network NCCL's figures come from
  std::string calibration_source;
  // Chunk pipelines (src/comm/pipeline_fill): NCCL_STEPS, the Simple buffer (NCCL_BUFFSIZE)
  // and NVLS's channel count.
  int pipeline_steps = 0;
  double simple_buffer_bytes = 0;
  int nvls_channels = 0;
  double nvls_chunk_bytes = 0;           // NCCL_NVLS_CHUNKSIZE's default: NVLS and NVLSTree chunks
  double nvls_tree_max_chunk_bytes = 0;  // NCCL_NVLSTREE_MAX_CHUNKSIZE's default from 4 nodes up
  // Point-to-point channels (src/comm/p2p_channels): the p2p channel pool, the channels one
  // peer may use, and the p2p chunk inside an NVLink node (NCCL_P2P_NVL_CHUNKSIZE) and across
  // nodes (NCCL_P2P_NET_CHUNKSIZE).
  struct P2p {
    int channels = 0;
    int channels_per_peer = 0;
    double nvl_chunk_bytes = 0;
    double net_chunk_bytes = 0;
  } p2p;
  // How NCCL schedules a group of sends and receives (src/comm/algorithms/p2p_schedule): the
  // p2p operations one channel runs at once (NCCL_MAX_DEV_WORK_P2P_PER_BATCH) and the channels
  // one peer across the network starts from (NCCL_NCHANNELS_PER_NET_PEER).
  struct P2pSchedule {
    int ops_per_batch = 0;
    int net_channels_per_peer = 0;
  } p2p_schedule;
  // What one channel (one CUDA block) copies over NVLink, GB/s, by NVLink generation.
  std::map<int, double> p2p_channel_GBps;
  // Ring/tree ("coll") channels NCCL opens inside one NVSwitch node, by NVLink generation.
  std::map<int, int> nvswitch_coll_channels;

  // A calibration's achieved fraction of the network's line rate, replacing the catalog's
  // figure for the network the communicator runs on (unset: the catalog's).
  std::optional<double> network_efficiency;
  std::string network_efficiency_for;  // the catalog network it was fitted on (empty: any)
  // What one channel of NCCL's SHM transport moves while its threads both store into and load
  // from host memory (a ring step), GB/s; a one-way chain's channel moves twice that.
  double shm_channel_GBps = 0;
  // What one TCP stream of NCCL's socket transport moves, GB/s.
  double socket_stream_GBps = 0;
  // NCCL's tuner constants (tuning.cc), which it chooses by; see the `tuner` block of nccl.yaml.
  // Arrays by GPU generation are indexed by GpuGeneration, and inside by NCCL's node-count
  // index (1 node, 2 nodes, more).
  struct Tuner {
    double base[kAlgoCount][kProtoCount];
    double hop[3][kAlgoCount][kProtoCount];
    double ll_max_GBps[4][3];
    double ring_ll128_cap_GBps[4][3];
    double tree_ll128_cap_GBps[4][3];
    double tree_cap_GBps[4][3];
    double nvls_tree_cap_GBps[4][3];
    double ring_ll = 0, ring_ll128 = 0, tree = 0, tree_ll = 0, tree_ll128_single_node = 0, tree_ll128_multi_node = 0,
           pat = 0;
    double nvls_efficiency[4];
    double tree_correction[3][24];
    double plateau_before_sm80 = 1, plateau_sm80 = 1;
    double net_overhead_intel_us = 0, net_overhead_amd_us = 0;
    double p2p_ll_threshold_bytes = 0;
    [[nodiscard]] double base_us(Algo a, Proto p) const { return base[static_cast<int>(a)][static_cast<int>(p)]; }
    [[nodiscard]] double hop_us(HopKind k, Algo a, Proto p) const {
      return hop[static_cast<int>(k)][static_cast<int>(a)][static_cast<int>(p)];
    }
  } tuner;

  [[nodiscard]] double base_us(Algo a, Proto p) const { return base[static_cast<int>(a)][static_cast<int>(p)]; }
  [[nodiscard]] double hop_us(HopKind k, Algo a, Proto p) const {
    return hop[static_cast<int>(k)][static_cast<int>(a)][static_cast<int>(p)];
  }
};

// The built-in parameters; a malformed file is an InputError.
const NcclParams& nccl_params();
NcclParams parse_nccl_params(const std::string& text, const std::string& file);

}  // namespace gf::comm
