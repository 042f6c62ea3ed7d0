#include "sched/import/k8s_quantity.hpp"

#include <charconv>
#include <cmath>
#include <utility>

namespace gf::sched {

std::optional<double> k8s_quantity(std::string_view s) {
  if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(s.data() + s.size() - end));
  static constexpr std::pair<std::string_view, double> kSuffixes[] = {{"", 1},
                                                                      {"n", 1e-9},
                                                                      {"u", 1e-6},
                                                                      {"m", 1e-3},
                                                                      {"k", 1e3},
                                                                      {"M", 1e6},
                                                                      {"G", 1e9},
                                                                      {"T", 1e12},
                                                                      {"P", 1e15},
                                                                      {"E", 1e18},
                                                                      {"Ki", 1024.0},
                                                                      {"Mi", 1048576.0},
                                                                      {"Gi", 1073741824.0},
                                                                      {"Ti", 1099511627776.0},
                                                                      {"Pi", 1125899906842624.0},
                                                                      {"Ei", 1152921504606846976.0}};
  for (const auto& [name, scale] : kSuffixes) {
    if (suffix == name) {
      const double out = v * scale;
      if (!std::isfinite(out)) return std::nullopt;
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace gf::sched
