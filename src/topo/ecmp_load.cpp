#include "topo/ecmp_load.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace gf::topo {

namespace {

double binomial_pmf(long n, long i, double p) {
  if (i < 0 || i > n) return 0.0;
  if (p >= 1.0) return i == n ? 1.0 : 0.0;
  const double log_c = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                       std::lgamma(static_cast<double>(n - i) + 1);
  return std::exp(log_c + static_cast<double>(i) * std::log(p) + static_cast<double>(n - i) * std::log1p(-p));
}

// P(no bin holds more than t balls), exactly: bin by bin, each of the n balls not yet placed
// falls into the next of the r bins left with probability 1/r.
double cdf_exact(long balls, long bins, long t) {
  std::vector<double> p(static_cast<std::size_t>(balls) + 1, 0.0);
  p[static_cast<std::size_t>(balls)] = 1.0;
  for (long b = 0; b < bins; ++b) {
    const long r = bins - b;
    std::vector<double> next(p.size(), 0.0);
    for (long n = 0; n <= balls; ++n) {
      const double pn = p[static_cast<std::size_t>(n)];
      if (pn == 0.0) continue;
      for (long i = 0; i <= std::min(t, n); ++i)
        next[static_cast<std::size_t>(n - i)] += pn * binomial_pmf(n, i, 1.0 / static_cast<double>(r));
    }
    p = std::move(next);
  }
  return p[0];
}

// The same with the bins taken as independent binomials: F(t)^bins.
double cdf_independent(long balls, long bins, long t) {
  double f = 0;
  for (long i = 0; i <= std::min(t, balls); ++i) f += binomial_pmf(balls, i, 1.0 / static_cast<double>(bins));
  return std::pow(std::min(1.0, f), static_cast<double>(bins));
}

double compute(long balls, long bins, long sets) {
  // Exact while one CDF costs under ~1e6 steps; E[max] = sum over t >= 0 of P(max > t).
  const bool exact = static_cast<double>(balls) * static_cast<double>(balls) * static_cast<double>(bins) < 1e6;
  double e = 0;
  for (long t = 0; t < balls; ++t) {
    const double cdf = exact ? cdf_exact(balls, bins, t) : cdf_independent(balls, bins, t);
    const double tail = 1.0 - std::pow(cdf, static_cast<double>(sets));
    e += tail;
    if (tail < 1e-9 && static_cast<double>(t) * static_cast<double>(bins) >= static_cast<double>(balls)) break;
  }
  return e;
}

}  // namespace

double expected_max_load(long balls, long bins, long sets) {
  if (balls <= 0) return 0.0;
  if (bins <= 1) return static_cast<double>(balls);
  sets = std::max(1L, sets);
  // Memoized: a pattern asks for the same (k, u, sets) once per collective shape.
  static std::mutex mutex;
  static std::map<std::tuple<long, long, long>, double> cache;
  const auto key = std::make_tuple(balls, bins, sets);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const double v = compute(balls, bins, sets);
  const std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, v).first->second;
}

double ecmp_slowdown(long flows, long uplinks, long sets) {
  if (flows <= 0 || uplinks <= 1) return 1.0;
  return std::max(1.0,
                  expected_max_load(flows, uplinks, sets) * static_cast<double>(uplinks) / static_cast<double>(flows));
}

}  // namespace gf::topo
