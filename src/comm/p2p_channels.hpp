#pragma once
// How many channels NCCL gives one point-to-point transfer, and the time that bounds.
//
// Why: NCCL splits a send (or recv) to one peer over a number of channels, each one CUDA block
// copying over NVLink with SM loads and stores. It does not always use them all: inside one
// node it starts from a few channels per peer (so that a rank talking to every peer at once
// still fits its channel pool), and doubles the count only while each channel would carry more
// than 32 steps of the p2p chunk (src/enqueue.cc, addP2pToPlan). A 64 MiB sendrecv on 8 GPUs
// therefore runs on 4 channels, and one block moves about one NVLink's worth of data, so it
// lands at a quarter of the bandwidth a 1 GiB transfer reaches. Published sweeps show exactly
// this staircase (80, 162, 300 GB/s at 64, 128, 256 MiB on 8 x H100).
#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "core/units.hpp"

namespace gf::comm {

// What one rank sends to one peer in `op` of `size` bytes (sendrecv: all of it; alltoall: a
// share per rank).
double p2p_peer_bytes(const Communicator& c, Op op, double size);

// Channels NCCL gives a transfer of `peer_bytes` to one peer on this communicator; 0 where the
// channel count does not bound the time (across nodes, or off NVLink: see the .cpp).
int p2p_channels(const Communicator& c, double peer_bytes);

// The least time NCCL's channels need for `op` of `size` bytes per rank (sendrecv: all of it
// to one peer; alltoall: size / ranks to each peer, all at once); zero where unbounded.
Seconds p2p_channel_time(const Communicator& c, Op op, double size);

// A Simple transfer to a peer on another node: the sender's kernel copies each chunk into the
// network buffer and the receiver's kernel copies it out, so the first chunk's copy in and the
// last one's copy out are in series with the network. Their time at one channel's copy rate,
// with NCCL's network chunk for this size; zero inside one node, or where NCCL gives no
// per-channel rate (GPUs without NVLink).
Seconds p2p_net_copy_fill(const Communicator& c, Op op, double size);

}  // namespace gf::comm
