#include "sched/load_curve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"

namespace gf::sched {

LoadCurve::LoadCurve(std::string name, std::vector<LoadPoint> points)
    : name_(std::move(name)), points_(std::move(points)) {
  if (points_.empty()) throw std::invalid_argument("a load curve needs at least one point");
}

double LoadCurve::rate_at(double t) const {
  if (points_.empty()) return 0;
  if (t <= points_.front().time_s) return points_.front().rate;
  if (t >= points_.back().time_s) return points_.back().rate;
  const auto it =
      std::upper_bound(points_.begin(), points_.end(), t, [](double v, const LoadPoint& p) { return v < p.time_s; });
  const LoadPoint& b = *it;
  const LoadPoint& a = *(it - 1);
  return a.rate + (b.rate - a.rate) * (t - a.time_s) / (b.time_s - a.time_s);
}

double LoadCurve::requests_between(double a, double b) const {
  if (b <= a || points_.empty()) return 0;
  // Trapezoids over the pieces [a, b] crosses: exact for a piecewise linear rate.
  std::vector<double> cuts{a};
  auto it =
      std::upper_bound(points_.begin(), points_.end(), a, [](double v, const LoadPoint& p) { return v < p.time_s; });
  for (; it != points_.end() && it->time_s < b; ++it) cuts.push_back(it->time_s);
  cuts.push_back(b);
  double sum = 0;
  for (std::size_t i = 1; i < cuts.size(); ++i)
    sum += 0.5 * (rate_at(cuts[i - 1]) + rate_at(cuts[i])) * (cuts[i] - cuts[i - 1]);
  return sum;
}

double LoadCurve::peak() const {
  double m = 0;
  for (const LoadPoint& p : points_) m = std::max(m, p.rate);
  return m;
}

double LoadCurve::average() const {
  const double d = duration_s() - (points_.empty() ? 0 : points_.front().time_s);
  return d > 0 ? requests_between(points_.front().time_s, duration_s()) / d : (points_.empty() ? 0 : points_[0].rate);
}

namespace {

// Mean of ((1 - cos x) / 2)^n over a period: C(2n, n) / 4^n.
double raised_cosine_mean(int n) {
  double m = 1;
  for (int k = 1; k <= n; ++k) m *= (2.0 * k - 1) / (2.0 * k);
  return m;
}

}  // namespace

LoadCurve diurnal_curve(double average_rate, double peak_factor, double hours, double step_s) {
  if (!(average_rate > 0) || !std::isfinite(average_rate))
    throw InputError({}, "average rate", fmt::format("got {}", average_rate), "a positive number of requests/s");
  if (!(peak_factor >= 1) || peak_factor > 1000)
    throw InputError({}, "peak factor", fmt::format("got {}", peak_factor), "from 1 (flat) to 1000");
  if (!(hours > 0) || hours > 24 * 366)
    throw InputError({}, "hours", fmt::format("got {}", hours), "more than 0, at most a year");
  if (!(step_s > 0) || step_s > hours * 3600)
    throw InputError({}, "step", fmt::format("got {} s", step_s), "more than 0, at most the curve's length");
  // The smallest power whose mean is at most 1 / peak_factor, then the floor b >= 0 that makes
  // (b + 1) / (b + mean) exactly the peak factor.
  int n = 1;
  while (raised_cosine_mean(n) > 1.0 / peak_factor && n < 400) ++n;
  const double mu = raised_cosine_mean(n);
  const double floor = peak_factor > 1 ? (1 - peak_factor * mu) / (peak_factor - 1) : 0;
  const double scale = peak_factor > 1 ? average_rate / (floor + mu) : 0;
  const double end = hours * 3600;
  std::vector<LoadPoint> pts;
  const long steps = static_cast<long>(std::ceil(end / step_s - 1e-9));
  for (long i = 0; i <= steps; ++i) {
    const double t = std::min(end, static_cast<double>(i) * step_s);
    const double c = 0.5 * (1 - std::cos(2 * std::numbers::pi * t / 86400.0));
    pts.push_back({t, peak_factor > 1 ? scale * (floor + std::pow(c, n)) : average_rate});
  }
  return LoadCurve(fmt::format("diurnal, average {:g} req/s, peak x{:g}", average_rate, peak_factor), std::move(pts));
}

namespace {

bool parse_double(std::string s, double& v) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(s.begin());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  return !s.empty() && ec == std::errc() && p == end && std::isfinite(v);
}

}  // namespace

LoadCurve parse_load_curve(const std::string& text, const std::string& file) {
  require_utf8(text, file);  // rows are quoted in errors, which reach JSON output
  std::vector<LoadPoint> pts;
  int line_no = 0;
  std::size_t pos = 0;
  bool seen_row = false;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const SourceLocation at{file, line_no, 1};
    const auto comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos)
      throw InputError(at, "row",
                       "'" + line + "' has " + (comma == std::string::npos ? "one field" : "over two fields"),
                       "time_s,rate: seconds from the start and requests per second");
    const std::string a = line.substr(0, comma), b = line.substr(comma + 1);
    if (!seen_row) {
      seen_row = true;
      std::string h = line;
      std::erase_if(h, [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
      if (h == "time_s,rate") continue;
    }
    LoadPoint p;
    if (!parse_double(a, p.time_s) || p.time_s < 0 || p.time_s > 1e9)
      throw InputError(at, "time_s", "got '" + a + "'", "seconds from the start, 0 to 1e9");
    if (!parse_double(b, p.rate) || p.rate < 0 || p.rate > 1e7)
      throw InputError({file, line_no, static_cast<int>(comma) + 2}, "rate", "got '" + b + "'",
                       "requests per second, 0 to 1e7");
    if (!pts.empty() && p.time_s <= pts.back().time_s)
      throw InputError(at, "time_s", fmt::format("{} s does not follow {} s", p.time_s, pts.back().time_s),
                       "times strictly increasing");
    pts.push_back(p);
  }
  if (pts.size() < 2)
    throw InputError({file, line_no, 0}, "rows", fmt::format("{} row(s)", pts.size()),
                     "at least two time_s,rate rows (the rate is linear between them)");
  double peak = 0;
  for (const auto& p : pts) peak = std::max(peak, p.rate);
  if (peak <= 0) throw InputError({file, 0, 0}, "rate", "every rate is 0", "some positive rate");
  return LoadCurve(file, std::move(pts));
}

LoadCurve load_curve_csv(const std::string& path) { return parse_load_curve(read_text_file(path, "--load"), path); }

}  // namespace gf::sched
