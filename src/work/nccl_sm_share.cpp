#include "work/nccl_sm_share.hpp"

#include <algorithm>

#include "work/compute_efficiency.hpp"

namespace gf::work {

double sm_share(const topo::Topology& t, int channels) {
  const int sms = ComputeEfficiency::builtin().sm_count(t.gpu_spec());
  return sms > 0 ? std::min(1.0, static_cast<double>(channels) / sms) : 0.0;
}

}  // namespace gf::work
