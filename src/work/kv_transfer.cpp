#include "work/kv_transfer.hpp"

#include <algorithm>
#include <cmath>

namespace gf::work {

KvTransfer::KvTransfer(TrainingContext& context, const InferenceCost& prefill, const std::vector<long>& prefill_gpus,
                       const std::vector<long>& decode_gpus, double typical_tokens, const BackgroundJob* background)
    : per_token_(prefill.kv_bytes_per_token_per_gpu()) {
  const std::size_t ranks = std::min(prefill_gpus.size(), decode_gpus.size());
  std::vector<std::vector<long>> pairs;
  for (std::size_t k = 0; k < ranks; ++k) pairs.push_back({prefill_gpus[k], decode_gpus[k]});
  contention_ =
      context.contention(pairs, comm::Op::sendrecv, std::max(1.0, typical_tokens) * per_token_, "int8", background);
  for (double t = 1; t <= 1 << 20; t *= 2)
    table_.add(t, context.collective(pairs.front(), comm::Op::sendrecv, t * per_token_, "int8").time.value());
}

double KvTransfer::seconds(long tokens) const { return table_.at(static_cast<double>(tokens)) * contention_; }

}  // namespace gf::work
