#pragma once
// The device memory NCCL holds for a communicator: each channel's connection to a peer carries a
// receive buffer per protocol, sized by NCCL's defaults (src/init.cc, computeBuffSizes):
// Simple NCCL_BUFFSIZE = 4 MiB, LL = 8 lines x 512 threads x 8 steps x 16 B = 512 KiB, LL128 =
// 120 elements x 640 threads x 8 steps x 8 B = 4,915,200 B.
namespace gf::work {

// NCCL's channel limit (MAXCHANNELS 32, src/include/devcomm.h of NCCL 2.x): the most channels a
// communicator opens, the bound this budget assumes.
inline constexpr int kNcclMaxChannels = 32;

inline constexpr double kNcclSimpleBuffer = 4.0 * 1024 * 1024;
inline constexpr double kNcclLlBuffer = 8.0 * 512 * 8 * 16;
inline constexpr double kNcclLl128Buffer = 120.0 * 640 * 8 * 8;

// Bytes one rank holds for a communicator whose ring runs `channels` channels: one receive
// connection per channel, each with the three protocols' buffers. 0 for a group of one rank
// (no communicator is created).
double nccl_buffer_bytes(long ranks, int channels);

}  // namespace gf::work
