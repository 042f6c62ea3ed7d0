#include "work/moe_overlap.hpp"

#include <algorithm>

namespace gf::work {

const char* to_string(MoeOverlap o) { return name_of(kMoeOverlapNames, o); }

MoeExposure exposed_all_to_all(MoeOverlap o, const MoePass& forward, const MoePass& backward, double paired,
                               double sm_share) {
  // Dispatch and combine: two all-to-alls a pass.
  const double comm_f = 2 * forward.all_to_all_s;
  const double comm_b = 2 * backward.all_to_all_s;
  MoeExposure out;
  switch (o) {
    case MoeOverlap::none:
      out.forward_s = comm_f;
      out.backward_s = comm_b;
      break;
    case MoeOverlap::shared_expert:
      out.forward_s = std::max(0.0, comm_f - forward.shared_s);
      out.backward_s = std::max(0.0, comm_b - backward.shared_s);
      break;
    case MoeOverlap::ep_a2a:
    case MoeOverlap::dualpipe: {
      // A merged forward-and-backward: the communication stream carries all four all-to-alls
      // while the compute stream runs both passes; what the compute cannot cover shows, shared
      // between the passes as their communication is.
      const double share = o == MoeOverlap::dualpipe ? 1.0 : std::clamp(paired, 0.0, 1.0);
      const double comm = comm_f + comm_b;
      const double exposed = std::max(0.0, comm - forward.compute_s - backward.compute_s);
      const double f_part = comm > 0 ? comm_f / comm : 0.5;
      out.forward_s = share * exposed * f_part + (1 - share) * comm_f;
      out.backward_s = share * exposed * (1 - f_part) + (1 - share) * comm_b;
      break;
    }
  }
  out.hidden_s = std::max(0.0, comm_f + comm_b - out.forward_s - out.backward_s);
  // The compute under hidden all-to-alls runs on the SMs they leave.
  const double slowdown = out.hidden_s * std::clamp(sm_share, 0.0, 1.0);
  const double comm = comm_f + comm_b;
  out.forward_s += comm > 0 ? slowdown * comm_f / comm : 0;
  out.backward_s += comm > 0 ? slowdown * comm_b / comm : 0;
  return out;
}

}  // namespace gf::work
