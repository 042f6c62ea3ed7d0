#pragma once
// A time that depends on a token count, priced at a geometric grid of counts and interpolated
// linearly between them (beyond the last point, in proportion). Serving meets every count from
// one token to the batch budget; pricing each through the communication layer would cost
// milliseconds apiece.
#include <algorithm>
#include <vector>

namespace gf::work {

class TokenTable {
public:
  // Points come in increasing token order; a repeated count keeps its first time.
  void add(double tokens, double seconds) {
    if (!tokens_.empty() && tokens <= tokens_.back()) return;
    tokens_.push_back(tokens);
    seconds_.push_back(seconds);
  }
  [[nodiscard]] bool empty() const { return tokens_.empty(); }
  // Seconds at `tokens` (0 for none, or an empty table).
  [[nodiscard]] double at(double tokens) const {
    if (tokens_.empty() || tokens <= 0) return 0;
    const auto it = std::lower_bound(tokens_.begin(), tokens_.end(), tokens);
    if (it == tokens_.begin()) return seconds_.front();
    if (it == tokens_.end()) return seconds_.back() * tokens / tokens_.back();
    const auto i = static_cast<std::size_t>(it - tokens_.begin());
    return seconds_[i - 1] +
           (seconds_[i] - seconds_[i - 1]) * (tokens - tokens_[i - 1]) / (tokens_[i] - tokens_[i - 1]);
  }

private:
  std::vector<double> tokens_;  // increasing
  std::vector<double> seconds_;
};

}  // namespace gf::work
