#pragma once
// How NCCL schedules the n - 1 send/receive pairs of an alltoall, and the time that costs
// beyond the bytes: the waves of peers the channels take one after another, and the network
// proxy's posts, one per remote peer and direction.
//
// Why: nccl-tests' alltoall is an ncclGroup of ncclSend/ncclRecv to every peer. NCCL's planner
// (src/enqueue.cc, scheduleP2pTasksToPlan and addP2pToPlan, NCCL 2.30) gives each peer's pair
// one p2p round; a channel runs up to NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8) of them at once in one
// batch, and its batches one after another, so NCCL itself counts p2pnChannels / channels-per-op
// x 8 peers in flight ("maxConcurrent"). Every peer on another node also costs its proxy thread
// a network post for the send and one for the receive, whatever the size. With one latency
// step for every rank count, 64 KiB took 23.8 us from 16 to 8,192 ranks.
#include "comm/collective.hpp"

namespace gf::comm {

class Communicator;

struct P2pSchedule {
  long peers = 0;           // ranks - 1
  long remote_peers = 0;    // peers on other nodes
  int channels = 0;         // NCCL's p2p channels (p2pnChannels)
  int channels_per_op = 0;  // channels one peer's transfer is striped over at this size
  long concurrent = 0;      // peers in flight at once: channels / channels_per_op x ops per batch
  long waves = 0;           // ceil(peers / concurrent)
};

// The schedule of `op` (alltoall; sendrecv has one peer) of `size` bytes per rank.
P2pSchedule p2p_schedule(const Communicator& c, Op op, double size);

// What the schedule adds to one step's latency, microseconds: a step per further wave (at the
// network's step figure across nodes), and the proxy's posts for every remote peer. The posts
// are counted in series with the data: a peer's bytes leave only once its send is posted and
// its receive buffer posted on the other side (the 32 MiB alltoall rows on 10 H100 nodes of
// data/validation/collectives_alltoall.yaml are 18-47% optimistic without them, 15-32% with).
double p2p_schedule_latency_us(const Communicator& c, Op op, Proto p, double size);

}  // namespace gf::comm
