#pragma once
// Moving a request's KV cache from a prefill instance to a decode instance (disaggregated
// serving, as DistServe, Splitwise and NVIDIA Dynamo run it): each TP rank of the prefill
// instance sends its shard to the same rank of the decode instance, all ranks at once. One
// pair's send is priced by the communication layer over the real route (NVLink inside a node,
// the NICs and fabric across nodes); the flow engine says how much the TP pairs slow one
// another where they share links (a NIC, a PCIe switch, an oversubscribed uplink), and how much
// a background job on the same fabric slows them.
#include <vector>

#include "work/inference_cost.hpp"
#include "work/token_table.hpp"

namespace gf::work {

class KvTransfer {
public:
  // `prefill_gpus` and `decode_gpus`: the two instances' GPUs, rank for rank.
  // `typical_tokens`: the prompt length the contention is measured at.
  KvTransfer(TrainingContext& context, const InferenceCost& prefill, const std::vector<long>& prefill_gpus,
             const std::vector<long>& decode_gpus, double typical_tokens, const BackgroundJob* background = nullptr);

  // Seconds to move the KV cache of `tokens` tokens.
  [[nodiscard]] double seconds(long tokens) const;
  [[nodiscard]] double contention() const { return contention_; }
  [[nodiscard]] double bytes_per_token_per_gpu() const { return per_token_; }

private:
  TokenTable table_;  // one pair's send, by tokens
  double per_token_ = 0;
  double contention_ = 1;
};

}  // namespace gf::work
