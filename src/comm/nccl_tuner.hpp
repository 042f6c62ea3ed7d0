#pragma once
// NCCL's tuner: the time NCCL's own model gives each algorithm and protocol (src/graph/tuning.cc,
// ncclTopoTuneModel and ncclTopoGetAlgoTime), which is what NCCL chooses by.
//
// Why a model of the model: NCCL does not choose by what an operation really takes. Its tuner
// has its own latency tables, per-channel bandwidth caps and correction factors, and no
// knowledge of the fabric's oversubscription or of chunk-pipeline fill. gpufabric reproduces
// that choice, then times the choice with its own model of the hardware; where they disagree,
// the output says which algorithm would have been faster and how to force it.
#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "core/units.hpp"

namespace gf::comm {

// NCCL's predicted time for `size` bytes of `op` with (algo, proto). `graph_time` is the time
// the algorithm's traffic takes at the Simple protocol's steady rate on the links as NCCL's
// topology sees them: it stands for NCCL's graph bandwidth (nChannels x bw per channel from its
// search). For NVLS and NVLSTree NCCL derives its bandwidth from the GPU's NVLink rate and its
// own NVLS efficiency estimate: `nvlink_GBps` is that rate (a GPU's NVLink at NCCL's SM-copy
// efficiency). Returns a negative time where NCCL's model disables the pair (bandwidth 0).
Seconds nccl_model_time(const Communicator& c, Op op, Algo algo, Proto proto, double size, Seconds graph_time,
                        double nvlink_GBps);

// NCCL's bus-to-algorithm bandwidth ratio ("Convert bus BW to algorithm BW" in tuning.cc).
double nccl_algbw_ratio(Op op, Algo algo, long ranks);

// NCCL's treeCorrectionFactor for `size` bytes: its measured shortfall of a tree's bandwidth
// at medium sizes, by log2(size / 64) over the first `sizes` powers of two (1 outside them).
double nccl_tree_correction(const Communicator& c, Proto p, double size, int sizes = 23);

// The protocol NCCL runs a point-to-point transfer of `peer_bytes` to one peer with: LL up to
// NCCL_P2P_LL_THRESHOLD bytes per channel, Simple above, where LL is available at all
// (nccl_p2p_ll_available: the candidates leave LL out where it is not).
Proto nccl_p2p_protocol(const Communicator& c, double peer_bytes, int channels);

// Whether point-to-point transfers may run LL here (not across nodes unless the network
// connections have LL buffers).
bool nccl_p2p_ll_available(const Communicator& c);

}  // namespace gf::comm
