#include "work/nccl_buffers.hpp"

namespace gf::work {

double nccl_buffer_bytes(long ranks, int channels) {
  if (ranks < 2 || channels < 1) return 0;
  return static_cast<double>(channels) * (kNcclSimpleBuffer + kNcclLlBuffer + kNcclLl128Buffer);
}

}  // namespace gf::work
