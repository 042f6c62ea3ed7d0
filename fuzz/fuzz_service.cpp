// Elastic-serving inputs (docs/autoscale-format.md): the same bytes read as a service file and
// as a load curve (CSV time_s,rate); a curve that parses must integrate to a finite, non-negative
// number of requests and stay within its peak.
#include <cmath>

#include "fuzz_support.hpp"
#include "sched/autoscale.hpp"
#include "sched/load_curve.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gf::fuzz::text_of(data, size);
  gf::fuzz::expect_clean([&] { (void)gf::sched::parse_service(text, "fuzz.yaml"); });
  return gf::fuzz::expect_clean([&] {
    const auto c = gf::sched::parse_load_curve(text, "fuzz.csv");
    const double d = c.duration_s();
    const double n = c.requests_between(0, d);
    if (!std::isfinite(n) || n < -1e-9) std::abort();
    if (c.rate_at(d / 2) > c.peak() * (1 + 1e-12) + 1e-12) std::abort();
  });
}
