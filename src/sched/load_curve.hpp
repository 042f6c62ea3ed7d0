#pragma once
// The offered load of an elastic-serving simulation over time: requests per second at points in
// time, linear between them (a CSV `time_s,rate`, or the built-in diurnal day). Before the first
// point the rate is the first point's; after the last, the last one's.
#include <string>
#include <vector>

namespace gf::sched {

struct LoadPoint {
  double time_s = 0;
  double rate = 0;  // requests per second
};

class LoadCurve {
public:
  LoadCurve() = default;
  LoadCurve(std::string name, std::vector<LoadPoint> points);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::vector<LoadPoint>& points() const { return points_; }
  // Requests per second at `t`, linear between points.
  [[nodiscard]] double rate_at(double t) const;
  // Requests offered from `a` to `b` (the integral of the rate; exact for piecewise linear).
  [[nodiscard]] double requests_between(double a, double b) const;
  [[nodiscard]] double duration_s() const { return points_.empty() ? 0 : points_.back().time_s; }
  [[nodiscard]] double peak() const;
  // Time-weighted mean rate over [0, duration].
  [[nodiscard]] double average() const;

private:
  std::string name_;
  std::vector<LoadPoint> points_;
};

// A day of traffic with its peak `peak_factor` times its average: rate(t) = a x (b + c(t)^n),
// c(t) = (1 - cos(2 pi t / 24 h)) / 2, a raised cosine with its trough at t = 0 (midnight) and its
// peak at 12 h, raised to the smallest power n whose mean leaves room for the peak (a plain
// raised cosine peaks at only twice its mean), plus the floor b that brings the ratio to exactly
// `peak_factor`. For 3: n = 3, trough 1/11 of the average. Sampled every `step_s` for `hours`
// (more than 24 repeats the day). An assumption about shape, not a measured trace.
LoadCurve diurnal_curve(double average_rate, double peak_factor, double hours, double step_s);

// A CSV of `time_s,rate` rows (seconds from the start, requests per second): a header line
// `time_s,rate` allowed, `#` comments and blank lines ignored, times strictly increasing from
// 0 or later, rates finite and >= 0, at least two rows. A bad row is an InputError at file:line.
LoadCurve parse_load_curve(const std::string& text, const std::string& file);
LoadCurve load_curve_csv(const std::string& path);

}  // namespace gf::sched
