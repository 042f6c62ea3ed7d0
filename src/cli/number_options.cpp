#include "cli/number_options.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

#include "core/error.hpp"

namespace gf::cli {

namespace {

// The number the whole of `text` spells, if it spells one finite number.
bool read_number(const std::string& text, double& v) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  return !text.empty() && ec == std::errc() && p == end && std::isfinite(v);
}

}  // namespace

double parse_number(const std::string& flag, const std::string& text, double min, double max,
                    const std::string& valid) {
  double v = 0;
  if (!read_number(text, v) || v < min || v > max) throw InputError({}, flag, "got '" + text + "'", valid);
  return v;
}

double parse_finite(const std::string& flag, const std::string& text) {
  const double inf = std::numeric_limits<double>::infinity();
  return parse_number(flag, text, -inf, inf, "a number");
}

double parse_positive(const std::string& flag, const std::string& text, double max) {
  double v = 0;
  if (!read_number(text, v) || !(v > 0) || v > max)
    throw InputError({}, flag, fmt::format("'{}' is not a number above 0 and at most {:g}", text, max),
                     fmt::format("a number above 0, at most {:g}", max));
  return v;
}

}  // namespace gf::cli
