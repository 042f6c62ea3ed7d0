#include "report/plan_report.hpp"

#include "report/html_escape.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gf::report {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Reading. A plan result may come from an older or newer gpufabric than this page, or be edited
// by hand, so no accessor throws: a missing key, a null and a value of the wrong type all read as
// "absent" (empty string, NaN, false, empty list).

const json& field(const json& j, std::string_view key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

const json& items(const json& j, std::string_view key) {
  static const json kEmpty = json::array();
  const json& v = field(j, key);
  return v.is_array() ? v : kEmpty;
}

std::string text(const json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return "";
}
std::string text(const json& j, std::string_view key) { return text(field(j, key)); }

double number(const json& j, std::string_view key) {
  const json& v = field(j, key);
  return v.is_number() ? v.get<double>() : std::nan("");
}

bool flag(const json& j, std::string_view key) {
  const json& v = field(j, key);
  return v.is_boolean() && v.get<bool>();
}

// A count for drawing: absent, negative or absurd values become `fallback`.
long count(const json& j, std::string_view key, long fallback) {
  const double v = number(j, key);
  return std::isfinite(v) && v >= 0 && v < 1e9 ? std::lround(v) : fallback;
}

// Without a `feasible` flag a candidate is feasible unless it says why not.
bool feasible(const json& c) {
  const json& v = field(c, "feasible");
  return v.is_boolean() ? v.get<bool>() : text(c, "why_not").empty();
}

// ---------------------------------------------------------------------------------------------
// Formatting.

constexpr std::string_view kDash = "\u2014";

std::string esc(std::string_view s) { return html_escape(s); }

// Three significant figures, with a k/M/B/T suffix from ten thousand up: axis ticks and table cells
// stay short, and 3.29M reads faster than 3293000 or 3.29e+06.
std::string human(double v) {
  if (!std::isfinite(v)) return std::string(kDash);
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e4) {
    static constexpr std::pair<double, const char*> kSuffixes[] = {{1e3, "k"}, {1e6, "M"}, {1e9, "B"}, {1e12, "T"}};
    for (const auto& [scale, suffix] : kSuffixes) {
      if (std::fabs(v / scale) < 999.5) return fmt::format("{:.3g}{}", v / scale, suffix);
    }
    return fmt::format("{:.3g}", v);
  }
  if (a >= 99.95) return fmt::format("{:.0f}", v);
  if (a >= 1e-3) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2e}", v);
}

// Whole numbers with thousands separators, for counts a reader may want exactly (81,234 layouts).
std::string grouped(double v) {
  if (!std::isfinite(v)) return std::string(kDash);
  if (std::fabs(v) >= 1e15 || std::fabs(v - std::round(v)) > 1e-9) return human(v);
  const long long n = std::llround(v);
  std::string digits = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return n < 0 ? "-" + digits : digits;
}

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.1f}%", 100.0 * fraction) : std::string(kDash);
}

std::string usd(double v) {
  if (!std::isfinite(v)) return std::string(kDash);
  return v < 0 ? "-$" + human(-v) : "$" + human(v);
}

// A grey note paragraph; `text` is the page's own wording, not data.
std::string muted(std::string_view text) { return fmt::format("<p class=\"muted\">{}</p>\n", text); }

// SVG coordinates: a tenth of a pixel is finer than any screen, and fixed digits keep output stable.
std::string px(double v) { return fmt::format("{:.1f}", v); }

// At most `max_chars` code points, ending in an ellipsis when cut; never splits a UTF-8 sequence.
std::string clip(const std::string& s, std::size_t max_chars) {
  std::vector<std::size_t> starts;  // byte offset of each code point
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (max_chars == 0 || starts.size() <= max_chars) return s;
  return s.substr(0, starts[max_chars - 1]) + "\u2026";
}

// ---------------------------------------------------------------------------------------------
// Content-Security-Policy: the page allows exactly its own script, named by SHA-256, so even a
// string that slipped past escaping could not run, and `default-src 'none'` forbids every fetch.
// Written here (FIPS 180-4) rather than linking a crypto library (OpenSSL) for one hash of one
// constant string; a nonce instead would make the page differ from run to run.

std::string sha256_base64(std::string_view data) {
  static constexpr std::array<std::uint32_t, 64> k = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
      0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
      0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
      0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
      0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
      0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
      0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
  std::array<std::uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg(data);
  msg += '\x80';
  while (msg.size() % 64 != 56) msg += '\0';
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 7; i >= 0; --i) msg += static_cast<char>((bits >> (8 * i)) & 0xff);
  for (std::size_t off = 0; off < msg.size(); off += 64) {
    std::array<std::uint32_t, 64> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      for (std::size_t b = 0; b < 4; ++b) w[i] = (w[i] << 8) | static_cast<unsigned char>(msg[off + 4 * i + b]);
    }
    for (std::size_t i = 16; i < 64; ++i) {
      const std::uint32_t s0 = std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, hh] = h;
    for (std::size_t i = 0; i < 64; ++i) {
      const std::uint32_t t1 =
          hh + (std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, hh};
    for (std::size_t i = 0; i < 8; ++i) h[i] += add[i];
  }
  std::string digest;
  for (std::uint32_t v : h) {
    for (int s = 24; s >= 0; s -= 8) digest += static_cast<char>((v >> s) & 0xff);
  }
  static constexpr std::string_view kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < digest.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(digest[i]) << 16;
    if (i + 1 < digest.size()) n |= static_cast<unsigned char>(digest[i + 1]) << 8;
    if (i + 2 < digest.size()) n |= static_cast<unsigned char>(digest[i + 2]);
    out += kB64[(n >> 18) & 63];
    out += kB64[(n >> 12) & 63];
    out += i + 1 < digest.size() ? kB64[(n >> 6) & 63] : '=';
    out += i + 2 < digest.size() ? kB64[n & 63] : '=';
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The plan, indexed once: candidates grouped by workload, and which ones were chosen.

struct Workload {
  std::string name, kind, summary;
  std::string x, y, x_label, y_label;  // candidate fields on the Pareto chart's axes
  std::vector<const json*> cands;
  bool serving() const { return kind == "serving"; }
};

struct Plan {
  const json& root;
  std::string chosen_id;
  std::vector<const json*> cands;
  std::vector<Workload> workloads;
  // A plan may flag one candidate per workload (the same hardware trains and serves); the
  // recommendation's id marks its headline choice even where the flag is missing.
  bool chosen(const json& c) const { return flag(c, "chosen") || (!chosen_id.empty() && text(c, "id") == chosen_id); }
  const json* first_chosen() const {
    for (const json* c : cands) {
      if (!chosen_id.empty() && text(*c, "id") == chosen_id) return c;
    }
    for (const json* c : cands) {
      if (flag(*c, "chosen")) return c;
    }
    return nullptr;
  }
};

Workload read_workload(const json& w) {
  Workload out{text(w, "name"), text(w, "kind"), text(w, "summary"), {}, {}, {}, {}, {}};
  const json& axes = field(w, "axes");
  out.x = text(axes, "x");
  out.y = text(axes, "y");
  // Without axes, the ones the planner uses for each kind.
  if (out.x.empty()) out.x = out.serving() ? "gpus" : "cost_usd";
  if (out.y.empty()) out.y = out.serving() ? "usd_per_mtok" : "time_days";
  out.x_label = text(axes, "x_label");
  out.y_label = text(axes, "y_label");
  if (out.x_label.empty()) out.x_label = out.x;
  if (out.y_label.empty()) out.y_label = out.y;
  return out;
}

Plan read_plan(const json& root) {
  Plan plan{root, text(field(root, "recommendation"), "candidate"), {}, {}};
  for (const json& c : items(root, "candidates")) {
    if (c.is_object()) plan.cands.push_back(&c);
  }
  std::map<std::string, std::size_t> index;
  for (const json& w : items(root, "workloads")) {
    if (!w.is_object()) continue;
    Workload wl = read_workload(w);
    if (index.emplace(wl.name, plan.workloads.size()).second) plan.workloads.push_back(std::move(wl));
  }
  // Candidates of a workload the list does not name still get a chart, in order of appearance.
  for (const json* c : plan.cands) {
    const std::string name = text(*c, "workload");
    auto [it, added] = index.emplace(name, plan.workloads.size());
    if (added) {
      const bool serving = std::isfinite(number(*c, "usd_per_mtok")) && !std::isfinite(number(*c, "time_days"));
      plan.workloads.push_back(read_workload(json{{"name", name}, {"kind", serving ? "serving" : "training"}}));
    }
    plan.workloads[it->second].cands.push_back(c);
  }
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Axes. Domains are in the axis's own units (log10 or log2 of the value on log axes) and ticks
// sit on 1-2-5 steps, so labels are round numbers a reader can interpolate between.

struct Axis {
  double lo = 0, hi = 1;  // domain
  int base = 0;           // 0: linear; 10 or 2: logarithmic
  double p0 = 0, p1 = 1;  // pixel range
  std::vector<double> ticks;
  double to_px(double v) const {
    const double t = base == 0 ? v : std::log(v) / std::log(static_cast<double>(base));
    return p0 + (t - lo) / (hi - lo) * (p1 - p0);
  }
};

double nice_step(double raw) {
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

Axis linear_axis(double lo, double hi, int target_ticks = 6) {
  if (!std::isfinite(hi - lo)) lo = 0, hi = 1;  // values near the limits of double: draw an empty frame
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  const double step = nice_step((hi - lo) / target_ticks);
  Axis a;
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step;
  for (int i = 0; i <= 50; ++i) {
    double t = a.lo + i * step;
    if (t > a.hi + step * 1e-6) break;
    if (std::fabs(t) < step * 1e-9) t = 0;  // no "-0" or "5.55e-17" labels
    a.ticks.push_back(t);
  }
  return a;
}

// Data that spans more than this factor gets a log axis, else a few points hide the rest.
constexpr double kLogSpan = 20;

Axis data_axis(double lo, double hi) {
  if (!(lo > 0 && hi / lo > kLogSpan)) {
    // A little room either side so no point sits on the frame.
    const double pad = (hi - lo) * 0.04;
    return linear_axis(lo >= 0 && lo - pad < 0 ? 0 : lo - pad, hi + pad);
  }
  Axis a;
  a.base = 10;
  const double span = std::log10(hi) - std::log10(lo);
  a.lo = std::log10(lo) - 0.05 * span;
  a.hi = std::log10(hi) + 0.05 * span;
  std::vector<double> decades, steps125;
  for (int e = static_cast<int>(std::floor(a.lo)); e <= static_cast<int>(std::ceil(a.hi)); ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (std::log10(v) < a.lo - 1e-9 || std::log10(v) > a.hi + 1e-9) continue;
      steps125.push_back(v);
      if (m == 1.0) decades.push_back(v);
    }
  }
  a.ticks = steps125.size() <= 9 ? steps125 : decades;
  if (a.ticks.size() > 12) {  // dozens of decades: every other one is plenty
    std::vector<double> thin;
    for (std::size_t i = 0; i < a.ticks.size(); i += (a.ticks.size() + 9) / 10) thin.push_back(a.ticks[i]);
    a.ticks = thin;
  }
  return a;
}

Axis log2_axis(double lo, double hi) {
  Axis a;
  a.base = 2;
  a.lo = std::log2(lo) - 0.3;
  a.hi = std::log2(hi) + 0.3;
  const int first = static_cast<int>(std::ceil(a.lo)), last = static_cast<int>(std::floor(a.hi));
  const int stride = std::max(1, (last - first + 12) / 12);
  for (int e = first; e <= last; e += stride) a.ticks.push_back(std::ldexp(1.0, e));
  return a;
}

using TickFormat = std::string (*)(double);

// Gridlines, tick labels and axis titles around the plot area [x.p0, x.p1] x [y.p1, y.p0].
void draw_axes(std::string& out, const Axis& x, const Axis& y, const std::string& x_title, const std::string& y_title,
               TickFormat fx, TickFormat fy, double height) {
  auto o = std::back_inserter(out);
  for (double t : y.ticks) {
    const double py = y.to_px(t);
    fmt::format_to(o, R"(<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"/>)", px(x.p0), px(x.p1), px(py), px(py));
    fmt::format_to(o, R"(<text class="tick" x="{}" y="{}" text-anchor="end" dy="0.32em">{}</text>)", px(x.p0 - 8),
                   px(py), esc(fy(t)));
  }
  for (double t : x.ticks) {
    const double pxv = x.to_px(t);
    fmt::format_to(o, R"(<line class="grid" x1="{}" x2="{}" y1="{}" y2="{}"/>)", px(pxv), px(pxv), px(y.p1), px(y.p0));
    fmt::format_to(o, R"(<text class="tick" x="{}" y="{}" text-anchor="middle">{}</text>)", px(pxv), px(y.p0 + 18),
                   esc(fx(t)));
  }
  fmt::format_to(o, R"(<rect class="frame" x="{}" y="{}" width="{}" height="{}"/>)", px(x.p0), px(y.p1),
                 px(x.p1 - x.p0), px(y.p0 - y.p1));
  // Titles are clipped to the length of their axis; the full text is the tooltip.
  fmt::format_to(o, R"(<text class="axis-label" x="{}" y="{}" text-anchor="middle"><title>{}</title>{}</text>)",
                 px((x.p0 + x.p1) / 2), px(height - 10), esc(x_title),
                 esc(clip(x_title, static_cast<std::size_t>((x.p1 - x.p0) / 8.5))));
  if (y_title.empty()) return;
  const double cy = (y.p0 + y.p1) / 2;
  fmt::format_to(o,
                 R"svg(<text class="axis-label" x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">)svg"
                 R"(<title>{}</title>{}</text>)",
                 px(cy), px(cy), esc(y_title), esc(clip(y_title, static_cast<std::size_t>((y.p0 - y.p1) / 8.5))));
}

std::string log_note(const Axis& x, const Axis& y) {
  if (x.base == 10 && y.base == 10) return " Both axes are logarithmic.";
  if (x.base == 10) return " The horizontal axis is logarithmic.";
  if (y.base == 10) return " The vertical axis is logarithmic.";
  return "";
}

// Palettes: a colour-blind-friendly categorical set for series and step-time segments.
constexpr std::array<std::string_view, 10> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::string_view kFrontColour = "#1f6feb";
constexpr std::string_view kChosenColour = "#d93025";

std::string swatch(std::string_view colour, std::string_view label, std::string_view shape = "") {
  return fmt::format(R"(<span><i class="sw{}" style="background:{}"></i>{}</span>)", shape, colour, esc(label));
}

// ---------------------------------------------------------------------------------------------
// Pareto chart, one per workload.

struct Point {
  double x, y;
  const json* c;
  bool front, chosen;
};

// Every front and chosen point, then an even stride through the rest, so a capped chart still
// shows the cloud's shape and the same input always keeps the same points.
std::vector<Point> cap_points(std::vector<Point> pts) {
  if (pts.size() <= kPlanScatterLimit) return pts;
  std::vector<Point> keep, rest;
  for (const Point& p : pts) (p.front || p.chosen ? keep : rest).push_back(p);
  const std::size_t room = kPlanScatterLimit > keep.size() ? kPlanScatterLimit - keep.size() : 0;
  for (std::size_t i = 0; i < room; ++i) keep.push_back(rest[i * rest.size() / room]);
  return keep;
}

std::string point_title(const Point& p, const Workload& w) {
  std::string t = text(*p.c, "design");
  const std::string layout = text(*p.c, "layout");
  if (!layout.empty()) t += "\n" + layout;
  t += fmt::format("\n{}: {}\n{}: {}", w.x_label, human(p.x), w.y_label, human(p.y));
  if (p.chosen || p.front) t += p.chosen ? "\nchosen" : "\non the Pareto front";
  return esc(t);
}

void draw_points(std::string& out, const std::vector<Point>& pts, const Workload& w, const Axis& x, const Axis& y) {
  auto o = std::back_inserter(out);
  std::vector<const Point*> front;
  for (const Point& p : pts) {
    if (p.front) front.push_back(&p);
    if (p.front || p.chosen) continue;
    fmt::format_to(o, R"(<circle class="pt other" cx="{}" cy="{}" r="3.5"><title>{}</title></circle>)",
                   px(x.to_px(p.x)), px(y.to_px(p.y)), point_title(p, w));
  }
  std::sort(front.begin(), front.end(),
            [](const Point* a, const Point* b) { return a->x != b->x ? a->x < b->x : a->y > b->y; });
  if (front.size() > 1) {
    out += R"(<polyline class="front-line" points=")";
    for (const Point* p : front) fmt::format_to(o, "{},{} ", px(x.to_px(p->x)), px(y.to_px(p->y)));
    out += R"("/>)";
  }
  for (const Point* p : front) {
    fmt::format_to(o, R"(<circle class="pt front" cx="{}" cy="{}" r="5.5"><title>{}</title></circle>)",
                   px(x.to_px(p->x)), px(y.to_px(p->y)), point_title(*p, w));
  }
  for (const Point& p : pts) {
    if (!p.chosen) continue;
    const double cx = x.to_px(p.x), cy = y.to_px(p.y);
    fmt::format_to(o, R"(<circle class="pt chosen" cx="{}" cy="{}" r="9"><title>{}</title></circle>)", px(cx), px(cy),
                   point_title(p, w));
    // The label goes right of the point unless that would leave the plot.
    const bool left = cx > x.p1 - 80;
    fmt::format_to(o, R"(<text class="chosen-label" x="{}" y="{}" text-anchor="{}">chosen</text>)",
                   px(left ? cx - 14 : cx + 14), px(cy < y.p1 + 20 ? cy + 22 : cy - 10), left ? "end" : "start");
  }
}

std::string pareto_chart(const Workload& w, const Plan& plan) {
  std::vector<Point> pts;
  std::size_t infeasible = 0, missing = 0;
  for (const json* c : w.cands) {
    if (!feasible(*c)) {
      ++infeasible;
      continue;
    }
    const double x = number(*c, w.x), y = number(*c, w.y);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      ++missing;
      continue;
    }
    pts.push_back({x, y, c, flag(*c, "pareto"), plan.chosen(*c)});
  }
  std::string out = fmt::format(R"(<p class="muted">{} feasible candidate{} plotted)", grouped(pts.size()),
                                pts.size() == 1 ? "" : "s");
  if (infeasible > 0) out += fmt::format("; {} infeasible not shown", grouped(infeasible));
  if (missing > 0) out += fmt::format("; {} without both values not shown", grouped(missing));
  if (pts.empty()) return out + ".</p>\n";
  const std::size_t all = pts.size();
  pts = cap_points(std::move(pts));
  if (pts.size() < all) out += fmt::format(" (a deterministic sample of {} drawn)", grouped(pts.size()));

  constexpr double kW = 960, kH = 440;
  auto [xmin, xmax] = std::minmax_element(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.x < b.x; });
  auto [ymin, ymax] = std::minmax_element(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.y < b.y; });
  Axis x = data_axis(xmin->x, xmax->x), y = data_axis(ymin->y, ymax->y);
  x.p0 = 84, x.p1 = kW - 24, y.p0 = kH - 58, y.p1 = 14;
  out += fmt::format(".{}</p>\n", log_note(x, y));
  out += R"(<div class="legend">)" + swatch("#9aa5b1", "candidate", " dot") +
         swatch(kFrontColour, "Pareto front", " dot") + swatch(kChosenColour, "chosen", " ring") +
         "<span>hover a point for its design</span></div>\n";
  out += fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">)", kW, kH,
                     esc("Pareto chart for " + w.name));
  draw_axes(out, x, y, w.x_label, w.y_label, human, human, kH);
  draw_points(out, pts, w, x, y);
  return out + "</svg>\n";
}

std::string pareto_section(const Plan& plan) {
  std::string out = R"(<section class="card"><h2>Trade-offs per workload</h2>)";
  if (plan.workloads.empty()) return out + muted("No workloads in this result.") + "</section>\n";
  for (const Workload& w : plan.workloads) {
    out += fmt::format(R"(<h3>{} <span class="kind">{}</span></h3>)", esc(w.name.empty() ? "(unnamed)" : w.name),
                       esc(w.kind));
    if (!w.summary.empty()) out += fmt::format(R"(<p class="summary">{}</p>)", esc(w.summary));
    out += pareto_chart(w, plan);
  }
  return out + "</section>\n";
}

// ---------------------------------------------------------------------------------------------
// Scaling curves.

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (GPUs, efficiency), by GPUs
};

std::vector<Series> read_series(const json& scaling) {
  std::vector<Series> out;
  if (!scaling.is_array()) return out;
  for (const json& s : scaling) {
    Series series{text(s, "series"), {}};
    for (const json& p : items(s, "points")) {
      const double g = number(p, "gpus"), e = number(p, "efficiency");
      if (std::isfinite(g) && g > 0 && std::isfinite(e)) series.points.emplace_back(g, e);
    }
    std::sort(series.points.begin(), series.points.end());
    if (!series.points.empty()) out.push_back(std::move(series));
  }
  return out;
}

std::string gpu_tick(double v) { return grouped(v); }
std::string percent_tick(double v) { return fmt::format("{:.0f}%", 100.0 * v); }

std::string scaling_section(const json& scaling) {
  std::string out = R"(<section class="card"><h2>Scaling efficiency</h2>)";
  const std::vector<Series> series = read_series(scaling);
  if (series.empty()) return out + muted("No scaling curves in this result.") + "</section>\n";
  double gmin = INFINITY, gmax = 0, emax = 1;
  for (const Series& s : series) {
    for (auto [g, e] : s.points) gmin = std::min(gmin, g), gmax = std::max(gmax, g), emax = std::max(emax, e);
  }
  constexpr double kW = 960, kH = 400;
  Axis x = log2_axis(gmin, gmax), y = linear_axis(0, std::ceil(emax * 10) / 10, 5);
  x.p0 = 84, x.p1 = kW - 24, y.p0 = kH - 58, y.p1 = 14;
  out += muted(
      "Efficiency is throughput per GPU relative to the smallest size measured for the series; GPUs on a "
      "log<sub>2</sub> axis.");
  out += R"(<div class="legend">)";
  for (std::size_t i = 0; i < series.size(); ++i) out += swatch(kPalette[i % kPalette.size()], series[i].name);
  out += "</div>\n";
  out += fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="Scaling efficiency">)", kW, kH);
  draw_axes(out, x, y, "GPUs", "Scaling efficiency", gpu_tick, percent_tick, kH);
  auto o = std::back_inserter(out);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string_view colour = kPalette[i % kPalette.size()];
    // Past ten series the colours repeat, so the repeats are dashed.
    fmt::format_to(o, R"(<polyline class="series" stroke="{}"{} points=")", colour,
                   i >= kPalette.size() ? R"( stroke-dasharray="6 4")" : "");
    for (auto [g, e] : series[i].points) fmt::format_to(o, "{},{} ", px(x.to_px(g)), px(y.to_px(e)));
    out += R"("/>)";
    for (auto [g, e] : series[i].points) {
      fmt::format_to(o, R"(<circle class="pt" cx="{}" cy="{}" r="3.5" fill="{}"><title>{}</title></circle>)",
                     px(x.to_px(g)), px(y.to_px(e)), colour,
                     esc(fmt::format("{}\n{} GPUs: {}", series[i].name, grouped(g), percent(e))));
    }
  }
  return out + "</svg></section>\n";
}

// ---------------------------------------------------------------------------------------------
// Step-time breakdown: where each second of a training step goes.

struct Segment {
  std::string_view key, label;
};
constexpr std::array<Segment, 9> kSegments = {{{"compute_s", "Compute"},
                                               {"tp_s", "Tensor parallel"},
                                               {"dp_exposed_s", "Data parallel (exposed)"},
                                               {"pp_bubble_s", "Pipeline bubble"},
                                               {"pp_p2p_s", "Pipeline send/recv"},
                                               {"cp_s", "Context parallel"},
                                               {"ep_s", "Expert parallel"},
                                               {"sm_contention_s", "SM contention (NCCL kernels)"},
                                               {"optimizer_s", "Optimizer"}}};

// The segments any bar uses, known ones in a fixed order and then any others the model adds,
// alphabetically (nlohmann keeps object keys sorted).
std::vector<std::pair<std::string, std::string>> segment_keys(const std::vector<const json*>& bars) {
  std::vector<std::pair<std::string, std::string>> out;
  auto used = [&](std::string_view key) {
    return std::any_of(bars.begin(), bars.end(), [&](const json* c) {
      const double v = number(field(*c, "breakdown"), key);
      return std::isfinite(v) && v > 0;
    });
  };
  for (const Segment& s : kSegments) {
    if (used(s.key)) out.emplace_back(s.key, s.label);
  }
  std::vector<std::string> extra;
  for (const json* c : bars) {
    const json& b = field(*c, "breakdown");
    for (auto it = b.begin(); b.is_object() && it != b.end(); ++it) {
      const bool known = std::any_of(kSegments.begin(), kSegments.end(), [&](auto& s) { return s.key == it.key(); });
      if (!known && used(it.key()) && std::find(extra.begin(), extra.end(), it.key()) == extra.end()) {
        extra.push_back(it.key());
      }
    }
  }
  std::sort(extra.begin(), extra.end());
  for (const std::string& k : extra) out.emplace_back(k, k);
  return out;
}

constexpr std::size_t kBreakdownBars = 6;

// The chosen candidate, then the rest of the Pareto front, then the fastest feasible steps.
std::vector<const json*> breakdown_bars(const Workload& w, const Plan& plan) {
  std::vector<const json*> pool;
  for (const json* c : w.cands) {
    if (feasible(*c) && field(*c, "breakdown").is_object()) pool.push_back(c);
  }
  auto rank = [&](const json* c) { return plan.chosen(*c) ? 0 : flag(*c, "pareto") ? 1 : 2; };
  auto step = [](const json* c) {
    const double s = number(*c, "step_s");
    return std::isfinite(s) ? s : INFINITY;
  };
  std::stable_sort(pool.begin(), pool.end(), [&](const json* a, const json* b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : step(a) < step(b);
  });
  if (pool.size() > kBreakdownBars) pool.resize(kBreakdownBars);
  return pool;
}

std::string breakdown_chart(const Workload& w, const Plan& plan) {
  const std::vector<const json*> bars = breakdown_bars(w, plan);
  const auto keys = segment_keys(bars);
  if (bars.empty() || keys.empty()) return muted("No step-time breakdown for this workload.");
  std::vector<double> totals;
  for (const json* c : bars) {
    double t = 0;
    for (const auto& key : keys) {
      const double v = number(field(*c, "breakdown"), key.first);
      if (std::isfinite(v) && v > 0) t += v;
    }
    if (!std::isfinite(t)) return muted("The step-time breakdown is out of range.");
    totals.push_back(t);
  }
  constexpr double kW = 960, kRow = 46, kTop = 8;
  const double height = kTop + kRow * static_cast<double>(bars.size()) + 44;
  Axis x = linear_axis(0, *std::max_element(totals.begin(), totals.end()), 6);
  x.p0 = 340, x.p1 = kW - 70;
  Axis y;  // only its pixel range matters: the frame spans the rows
  y.p0 = height - 44, y.p1 = kTop;
  std::string out = R"(<div class="legend">)";
  for (std::size_t i = 0; i < keys.size(); ++i) out += swatch(kPalette[i % kPalette.size()], keys[i].second);
  out += "</div>\n";
  out += fmt::format(R"(<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">)", kW, px(height),
                     esc("Step-time breakdown for " + w.name));
  draw_axes(out, x, y, "Seconds per step", "", human, human, height);
  auto o = std::back_inserter(out);
  for (std::size_t r = 0; r < bars.size(); ++r) {
    const json& c = *bars[r];
    const double top = kTop + kRow * static_cast<double>(r) + 10;
    const std::string design = text(c, "design"), layout = text(c, "layout");
    const bool chosen = plan.chosen(c);
    fmt::format_to(o, R"(<text class="bar-label{}" x="8" y="{}"><title>{}</title>{}</text>)",
                   chosen ? " chosen-text" : "", px(top + 9), esc(design), esc(clip(design, 44)));
    fmt::format_to(o, R"(<text class="bar-sub" x="8" y="{}">{}</text>)", px(top + 24),
                   esc(clip((chosen ? "chosen \u00b7 " : "") + layout, 52)));
    double at = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const double v = number(field(c, "breakdown"), keys[i].first);
      if (!std::isfinite(v) || v <= 0) continue;
      fmt::format_to(o, R"(<rect class="seg" x="{}" y="{}" width="{}" height="24" fill="{}"><title>{}</title></rect>)",
                     px(x.to_px(at)), px(top), px(x.to_px(at + v) - x.to_px(at)), kPalette[i % kPalette.size()],
                     esc(fmt::format("{}\n{}: {} s ({:.1f}% of the step)", design, keys[i].second, human(v),
                                     totals[r] > 0 ? 100.0 * v / totals[r] : 0.0)));
      at += v;
    }
    fmt::format_to(o, R"(<text class="bar-total" x="{}" y="{}">{} s</text>)", px(x.to_px(at) + 6), px(top + 16),
                   human(totals[r]));
  }
  return out + "</svg>\n";
}

std::string breakdown_section(const Plan& plan) {
  std::string out = R"(<section class="card"><h2>Step-time breakdown</h2>)" +
                    muted(
                        "Seconds per training step for the chosen candidate and up to five others (the rest of "
                        "the Pareto front, then the fastest).");
  bool any = false;
  for (const Workload& w : plan.workloads) {
    if (w.serving()) continue;
    any = true;
    out += fmt::format(R"(<h3>{}</h3>)", esc(w.name.empty() ? "(unnamed)" : w.name));
    out += breakdown_chart(w, plan);
  }
  if (!any) out += muted("No training workloads in this result.");
  return out + "</section>\n";
}

// ---------------------------------------------------------------------------------------------
// The chosen topology, drawn as rows of spine switches, leaf switches and nodes.

struct TopoShape {
  std::string label, intra, network, fabric;
  long nodes = 0, gpus_per_node = 0, nics = 0, tiers = 0, leaves = 0, spines = 0;
  double oversubscription = NAN;
};

// From `topology`, each field falling back to the chosen candidate's.
TopoShape read_topology(const json& t, const json* chosen) {
  static const json kNull;
  const json& c = chosen != nullptr ? *chosen : kNull;
  auto str = [&](std::string_view key, std::string_view alt) {
    std::string v = text(t, key);
    return v.empty() ? text(c, alt) : v;
  };
  auto num = [&](std::string_view key) { return count(t, key, count(c, key, 0)); };
  TopoShape s;
  s.label = str("label", "design");
  s.intra = str("intra_node", "intra_node");
  s.network = str("network", "network");
  s.fabric = str("fabric", "fabric");
  s.nodes = num("nodes");
  s.gpus_per_node = num("gpus_per_node");
  s.nics = num("nics_per_node");
  s.tiers = num("tiers");
  s.leaves = num("leaf_switches");
  s.spines = num("spine_switches");
  s.oversubscription =
      std::isfinite(number(t, "oversubscription")) ? number(t, "oversubscription") : number(c, "oversubscription");
  // A network with no switch counts still has at least one switch to draw.
  if (s.leaves == 0 && s.nodes > 1 && !s.network.empty() && s.network != "none") s.leaves = 1;
  if (s.tiers == 0 && s.leaves > 0) s.tiers = s.spines > 0 ? 2 : 1;
  if (s.tiers <= 1) s.spines = 0;
  return s;
}

std::string topology_caption(const TopoShape& s) {
  std::vector<std::string> parts;
  if (s.nodes > 0) {
    parts.push_back(fmt::format("{} node{} \u00d7 {} GPUs", grouped(static_cast<double>(s.nodes)),
                                s.nodes == 1 ? "" : "s", s.gpus_per_node));
  }
  if (!s.intra.empty()) parts.push_back("intra-node " + s.intra);
  if (s.nics > 0) parts.push_back(fmt::format("{} NIC{} per node", s.nics, s.nics == 1 ? "" : "s"));
  if (!s.network.empty()) parts.push_back("network " + s.network);
  if (!s.fabric.empty()) parts.push_back(s.fabric);
  if (s.tiers > 0) parts.push_back(fmt::format("{} tier{}", s.tiers, s.tiers == 1 ? "" : "s"));
  if (std::isfinite(s.oversubscription)) {
    parts.push_back(fmt::format("{}:1 oversubscription", human(s.oversubscription)));
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : " \u00b7 ") + p;
  return out;
}

struct Row {
  double x0, slot;  // left edge of the first slot, and slot width
  long drawn, more;
  double centre(long i) const { return x0 + slot * (static_cast<double>(i) + 0.5); }
};

// Up to kPlanDrawLimit items centred in [left, right], plus one slot for "… N more".
Row row_layout(long n, double left, double right, double max_slot) {
  Row r{0, 0, std::min(n, kPlanDrawLimit), std::max(0L, n - kPlanDrawLimit)};
  const double slots = static_cast<double>(r.drawn + (r.more > 0 ? 1 : 0));
  r.slot = std::min(max_slot, (right - left) / std::max(1.0, slots));
  r.x0 = left + (right - left - r.slot * slots) / 2;
  return r;
}

void draw_switch_row(std::string& out, const Row& r, double y, std::string_view cls, std::string_view prefix) {
  auto o = std::back_inserter(out);
  const char letter = prefix == "spine" ? 'S' : 'L';
  const double w = r.slot - 12;
  for (long i = 0; i < r.drawn; ++i) {
    fmt::format_to(o, R"(<rect class="{}" x="{}" y="{}" width="{}" height="26" rx="4"><title>{} {}</title></rect>)",
                   cls, px(r.centre(i) - w / 2), px(y), px(w), prefix, i + 1);
    if (w >= 26) {
      fmt::format_to(o, R"(<text class="sw-text" x="{}" y="{}" text-anchor="middle">{}{}</text>)", px(r.centre(i)),
                     px(y + 17), letter, i + 1);
    }
  }
  if (r.more > 0) {
    fmt::format_to(o, R"(<text class="more" x="{}" y="{}" text-anchor="middle">… {} more</text>)",
                   px(r.centre(r.drawn)), px(y + 17), grouped(static_cast<double>(r.more)));
  }
}

void draw_row_label(std::string& out, double y, std::string_view title, const std::string& detail) {
  fmt::format_to(std::back_inserter(out),
                 R"(<text class="row-title" x="12" y="{}">{}</text><text class="row-detail" x="12" y="{}">{}</text>)",
                 px(y), title, px(y + 15), esc(detail));
}

// One node: NICs on its top edge, a grid of GPUs, and the intra-node fabric as a bar along the bottom.
// Returns the NICs' x positions, where network links start.
std::vector<double> draw_node(std::string& out, const TopoShape& s, double cx, double y, double w, double h,
                              long index) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, R"(<rect class="node" x="{}" y="{}" width="{}" height="{}" rx="5"><title>node {}</title></rect>)",
                 px(cx - w / 2), px(y), px(w), px(h), index);
  const long gpus = std::min(s.gpus_per_node, 16L), cols = std::max(1L, std::min(gpus, 4L));
  const double g = std::clamp((w - 10 - 3.0 * static_cast<double>(cols - 1)) / static_cast<double>(cols), 5.0, 14.0);
  const double grid_w = static_cast<double>(cols) * g + 3.0 * static_cast<double>(cols - 1);
  for (long i = 0; i < gpus; ++i) {
    fmt::format_to(o, R"(<rect class="gpu" x="{}" y="{}" width="{}" height="{}" rx="1.5"/>)",
                   px(cx - grid_w / 2 + static_cast<double>(i % cols) * (g + 3)),
                   px(y + 12 + static_cast<double>(i / cols) * (g + 3)), px(g), px(g));
  }
  if (s.gpus_per_node > gpus) {
    fmt::format_to(o, R"(<text class="more" x="{}" y="{}" text-anchor="middle">+{}</text>)", px(cx), px(y + h - 18),
                   s.gpus_per_node - gpus);
  }
  if (!s.intra.empty()) {
    fmt::format_to(o, R"(<rect class="intra" x="{}" y="{}" width="{}" height="7" rx="2"><title>{}</title></rect>)",
                   px(cx - w / 2 + 5), px(y + h - 12), px(w - 10), esc(s.intra));
  }
  std::vector<double> nic_x;
  const long nics = std::min(s.nics, 8L);
  for (long i = 0; i < nics; ++i) {
    const double step = (w - 8) / static_cast<double>(nics);
    const double nx = cx - w / 2 + 4 + step * (static_cast<double>(i) + 0.5);
    fmt::format_to(o, R"(<rect class="nic" x="{}" y="{}" width="{}" height="5"/>)",
                   px(nx - std::min(3.0, step / 2 - 0.5)), px(y - 2.5), px(std::min(6.0, step - 1)));
    nic_x.push_back(nx);
  }
  fmt::format_to(o, R"(<text class="node-text" x="{}" y="{}" text-anchor="middle">n{}</text>)", px(cx), px(y + h + 14),
                 index);
  return nic_x;
}

std::string topology_svg(const TopoShape& s) {
  constexpr double kW = 1200, kLeft = 150, kRight = kW - 16;
  const bool has_spine = s.spines > 0, has_leaf = s.leaves > 0;
  const double spine_y = 16, leaf_y = has_spine ? 126 : 16, node_y = has_leaf ? leaf_y + 120 : 16;
  const long gpu_rows = (std::min(s.gpus_per_node, 16L) + 3) / 4;
  const double node_h = 30 + 17.0 * static_cast<double>(std::max(1L, gpu_rows));
  const double height = node_y + node_h + 34;
  const Row nodes = row_layout(std::max(1L, s.nodes), kLeft, kRight, 140);
  const Row leaves = row_layout(s.leaves, kLeft, kRight, 110), spines = row_layout(s.spines, kLeft, kRight, 110);
  std::string out = fmt::format(R"(<svg class="chart topo" viewBox="0 0 {} {}" role="img" aria-label="{}">)", kW,
                                px(height), esc("Topology of " + s.label));
  auto o = std::back_inserter(out);
  // Links first, so boxes sit on top of them.
  for (long i = 0; has_spine && i < leaves.drawn; ++i) {
    for (long j = 0; j < spines.drawn; ++j) {
      fmt::format_to(o, R"(<line class="link up" x1="{}" y1="{}" x2="{}" y2="{}"/>)", px(leaves.centre(i)), px(leaf_y),
                     px(spines.centre(j)), px(spine_y + 26));
    }
  }
  const double node_w = nodes.slot - 12;
  const bool rail = s.fabric.find("rail") != std::string::npos;
  std::string boxes;
  for (long i = 0; i < nodes.drawn; ++i) {
    const std::vector<double> nic_x = draw_node(boxes, s, nodes.centre(i), node_y, node_w, node_h, i);
    if (!has_leaf) continue;
    if (rail) {  // NIC k goes to rail k's leaf
      for (std::size_t k = 0; k < nic_x.size(); ++k) {
        const long leaf = static_cast<long>(k) % s.leaves;
        if (leaf >= leaves.drawn) continue;
        fmt::format_to(o, R"(<line class="link" x1="{}" y1="{}" x2="{}" y2="{}"/>)", px(nic_x[k]), px(node_y - 2),
                       px(leaves.centre(leaf)), px(leaf_y + 26));
      }
      continue;
    }
    // A fat-tree wires all of a node's NICs to one leaf: one line, wider for more links.
    const long leaf = i * s.leaves / std::max(1L, s.nodes);
    if (leaf >= leaves.drawn) continue;
    fmt::format_to(
        o, R"(<line class="link" stroke-width="{}" x1="{}" y1="{}" x2="{}" y2="{}"><title>{} link{}</title></line>)",
        px(1 + 0.5 * std::log2(static_cast<double>(std::max(1L, s.nics)))), px(nodes.centre(i)), px(node_y - 2),
        px(leaves.centre(leaf)), px(leaf_y + 26), std::max(1L, s.nics), s.nics == 1 ? "" : "s");
  }
  // Leaves whose nodes are all among the "… N more" point at that label.
  for (long j = 0; has_leaf && !rail && nodes.more > 0 && j < leaves.drawn; ++j) {
    const long first_node = (j * s.nodes + s.leaves - 1) / s.leaves;
    if (first_node < nodes.drawn) continue;
    fmt::format_to(o, R"(<line class="link more-link" x1="{}" y1="{}" x2="{}" y2="{}"/>)", px(leaves.centre(j)),
                   px(leaf_y + 26), px(nodes.centre(nodes.drawn)), px(node_y + node_h / 2 - 10));
  }
  out += boxes;
  if (nodes.more > 0) {
    fmt::format_to(o, R"(<text class="more" x="{}" y="{}" text-anchor="middle">… {} more</text>)",
                   px(nodes.centre(nodes.drawn)), px(node_y + node_h / 2 + 4),
                   grouped(static_cast<double>(nodes.more)));
  }
  if (has_spine) {
    draw_switch_row(out, spines, spine_y, "spine", "spine");
    draw_row_label(out, spine_y + 10, s.tiers > 2 ? "Spine / core" : "Spine",
                   fmt::format("{} switches", grouped(static_cast<double>(s.spines))));
  }
  if (has_leaf) {
    draw_switch_row(out, leaves, leaf_y, "leaf", "leaf");
    draw_row_label(out, leaf_y + 10, s.tiers <= 1 ? "Switch" : "Leaf",
                   fmt::format("{} switch{}", grouped(static_cast<double>(s.leaves)), s.leaves == 1 ? "" : "es"));
  }
  draw_row_label(out, node_y + 14, "Nodes",
                 fmt::format("{} \u00d7 {} GPUs", grouped(static_cast<double>(s.nodes)), s.gpus_per_node));
  return out + "</svg>\n";
}

std::string topology_section(const json& topology, const Plan& plan) {
  std::string out = R"(<section class="card"><h2>Chosen topology</h2>)";
  const TopoShape s = read_topology(topology, plan.first_chosen());
  if (s.nodes <= 0) return out + muted("No topology in this result.") + "</section>\n";
  if (!s.label.empty()) out += fmt::format(R"(<p class="topo-label">{}</p>)", esc(s.label));
  out += fmt::format(R"(<p class="muted">{}</p>)", esc(topology_caption(s)));
  out += R"(<div class="legend">)" + swatch("#5b8def", "GPU") + swatch("#c4b5fd", "intra-node fabric: " + s.intra) +
         swatch("#f59e0b", "NIC") + swatch("#e7eef9", "leaf switch") + swatch("#dfe7d3", "spine switch") + "</div>\n";
  return out + topology_svg(s) + "</section>\n";
}

// ---------------------------------------------------------------------------------------------
// The table of all candidates. Rows are built here, escaped; the page's script only reorders them.

enum class Col { text, wrap, number, integer, fraction, dollars, status };
struct Column {
  std::string_view key, heading;
  Col kind;
};
constexpr std::array<Column, 17> kColumns = {{{"id", "ID", Col::text},
                                              {"workload", "Workload", Col::text},
                                              {"design", "Design", Col::wrap},
                                              {"layout", "Layout", Col::wrap},
                                              {"why_not", "Status", Col::status},
                                              {"gpus", "GPUs", Col::integer},
                                              {"nodes", "Nodes", Col::integer},
                                              {"time_days", "Time (days)", Col::number},
                                              {"step_s", "Step (s)", Col::number},
                                              {"mfu", "MFU", Col::fraction},
                                              {"goodput", "Goodput", Col::fraction},
                                              {"cost_usd", "Cost", Col::dollars},
                                              {"tco_usd", "TCO", Col::dollars},
                                              {"capex_usd", "Capex", Col::dollars},
                                              {"energy_mwh", "Energy (MWh)", Col::number},
                                              {"power_kw", "Power (kW)", Col::number},
                                              {"usd_per_mtok", "USD / M tokens", Col::dollars}}};

std::string status(const json& c, const Plan& plan) {
  if (!feasible(c)) {
    const std::string why = text(c, "why_not");
    return why.empty() ? "infeasible" : why;
  }
  if (plan.chosen(c)) return "chosen";
  return flag(c, "pareto") ? "Pareto front" : "feasible";
}

std::string table_cell(const json& c, const Column& col, const Plan& plan) {
  if (col.kind == Col::text) return "<td>" + esc(text(c, col.key)) + "</td>";
  if (col.kind == Col::wrap) return R"(<td class="wrap">)" + esc(text(c, col.key)) + "</td>";
  if (col.kind == Col::status) return R"(<td class="wrap">)" + esc(status(c, plan)) + "</td>";
  const double v = number(c, col.key);
  std::string shown;
  switch (col.kind) {
    case Col::integer: shown = grouped(v); break;
    case Col::fraction: shown = percent(v); break;
    case Col::dollars: shown = usd(v); break;
    default: shown = human(v);
  }
  // data-v holds the exact value so sorting is numeric; empty sorts last either way.
  return fmt::format(R"(<td class="num" data-v="{}">{}</td>)", std::isfinite(v) ? fmt::format("{}", v) : "", shown);
}

std::string table_section(const Plan& plan) {
  std::size_t ok = 0;
  for (const json* c : plan.cands) ok += feasible(*c);
  std::string out = fmt::format(
      R"(<section class="card"><h2>All candidates</h2><p class="muted">{} candidates, {} feasible. Click a )"
      R"(column heading to sort; click again to reverse. Infeasible rows are grey and say why.</p>)"
      "\n",
      grouped(static_cast<double>(plan.cands.size())), grouped(static_cast<double>(ok)));
  if (plan.cands.empty()) return out + "</section>\n";
  out += R"(<div class="table-wrap"><table class="sortable"><thead><tr>)";
  for (const Column& col : kColumns) {
    const bool numeric = col.kind != Col::text && col.kind != Col::wrap && col.kind != Col::status;
    fmt::format_to(std::back_inserter(out), R"(<th scope="col" tabindex="0" data-type="{}"{}>{}</th>)",
                   numeric ? "num" : "text", numeric ? R"( class="num")" : "", col.heading);
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const json* c : plan.cands) {
    const char* cls = !feasible(*c) ? R"( class="infeasible")" : plan.chosen(*c) ? R"( class="chosen")" : "";
    out += fmt::format("<tr{}>", cls);
    for (const Column& col : kColumns) out += table_cell(*c, col, plan);
    out += "</tr>\n";
  }
  return out + "</tbody></table></div></section>\n";
}

// ---------------------------------------------------------------------------------------------
// Header and recommendation.

std::string tile(std::string_view label, const std::string& value) {
  return fmt::format(R"(<div class="tile"><div class="v">{}</div><div class="k">{}</div></div>)", esc(value),
                     esc(label));
}

std::string header_section(const json& root, const Plan& plan) {
  const json& p = field(root, "plan");
  const std::string name = text(p, "name");
  std::string out = fmt::format(R"(<header class="top"><div class="eyebrow">gpufabric plan</div><h1>{}</h1>)",
                                esc(name.empty() ? "Unnamed plan" : name));
  out += R"(<dl class="meta">)";
  auto meta = [&](std::string_view k, const std::string& v, bool mono) {
    if (v.empty()) return;
    fmt::format_to(std::back_inserter(out), R"(<dt>{}</dt><dd{}>{}</dd>)", k, mono ? R"( class="mono")" : "", esc(v));
  };
  meta("Plan file", text(p, "file"), true);
  meta("Plan hash", text(p, "hash"), true);
  meta("Objective", text(p, "objective"), false);
  meta("Model", text(root, "model_version"), false);
  out += "</dl>\n";
  const json& n = field(root, "counts");
  std::size_t ok = 0;
  for (const json* c : plan.cands) ok += feasible(*c);
  out += R"(<div class="tiles">)" + tile("designs", grouped(number(n, "designs"))) +
         tile("layouts evaluated", grouped(number(n, "layouts_evaluated"))) +
         tile("pruned for memory", grouped(number(n, "pruned_memory"))) +
         tile("excluded by limits", grouped(number(n, "excluded_by_limits"))) +
         tile("candidates reported", grouped(static_cast<double>(plan.cands.size()))) +
         tile("feasible", grouped(static_cast<double>(ok))) + "</div>\n";
  std::string notes;
  for (const json& note : items(p, "notes")) {
    if (!text(note).empty()) notes += "<li>" + esc(text(note)) + "</li>";
  }
  if (!notes.empty()) out += R"(<ul class="notes">)" + notes + "</ul>\n";
  return out + "</header>\n";
}

// Whether the result says its search is incomplete (a store read part way by --show). A result
// without the "search" object (from an older gpufabric) says nothing and reads as complete.
bool incomplete(const json& root) {
  const json& c = field(field(root, "search"), "complete");
  return c.is_boolean() && !c.get<bool>();
}

// The warning that heads the page of an incomplete search, before any number on it.
std::string incomplete_section(const json& root) {
  if (!incomplete(root)) return "";
  const json& s = field(root, "search");
  std::string note = text(s, "note");
  if (note.empty()) note = "The search is incomplete; the recommendation is provisional.";
  return fmt::format(R"(<section class="card incomplete" role="alert"><h2>Incomplete search: provisional answer</h2>)"
                     R"(<p>{}</p><p>{} of {} candidates missing.</p></section>)"
                     "\n",
                     esc(note), esc(grouped(number(s, "candidates_missing"))),
                     esc(grouped(number(s, "candidates_expected"))));
}

std::string recommendation_section(const json& root, const Plan& plan) {
  const json& r = field(root, "recommendation");
  const bool provisional = incomplete(root);
  std::string out = provisional ? R"(<section class="card recommendation"><h2>Provisional recommendation</h2>)"
                                : R"(<section class="card recommendation"><h2>Recommendation</h2>)";
  const std::string headline = text(r, "headline");
  out += fmt::format(R"(<p class="headline">{}</p>)", esc(headline.empty() ? "No recommendation." : headline));
  std::string reasons;
  for (const json& reason : items(r, "reasons")) {
    if (!text(reason).empty()) reasons += "<li>" + esc(text(reason)) + "</li>";
  }
  if (!reasons.empty()) out += R"(<ul class="reasons">)" + reasons + "</ul>\n";
  if (const json* c = plan.first_chosen()) {
    out += fmt::format(R"(<p class="chosen-design"><span class="badge">{}</span> {} <span class="muted">{}</span></p>)",
                       provisional ? "provisional" : "chosen", esc(text(*c, "design")), esc(text(*c, "layout")));
    std::string tiles;
    auto add = [&](std::string_view label, double v, std::string (*f)(double)) {
      if (std::isfinite(v)) tiles += tile(label, f(v));
    };
    add("GPUs", number(*c, "gpus"), grouped);
    add("days to train", number(*c, "time_days"), human);
    add("cost", number(*c, "cost_usd"), usd);
    add("MFU", number(*c, "mfu"), percent);
    add("goodput", number(*c, "goodput"), percent);
    add("USD per M tokens", number(*c, "usd_per_mtok"), usd);
    add("power (kW)", number(*c, "power_kw"), human);
    add("capex", number(*c, "capex_usd"), usd);
    if (!tiles.empty()) out += R"(<div class="tiles">)" + tiles + "</div>\n";
  }
  return out + "</section>\n";
}

// ---------------------------------------------------------------------------------------------
// The page shell.

constexpr std::string_view kStyle = R"CSS(
:root{--fg:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#f4f6f9;--card:#fff;--accent:#1f6feb;--chosen:#d93025}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","DejaVu Sans",sans-serif}
main{max-width:1320px;margin:0 auto;padding:28px 32px 48px}
header.top{padding:4px 2px 8px}
.eyebrow{text-transform:uppercase;letter-spacing:.08em;font-size:11.5px;color:var(--muted);font-weight:600}
h1{font-size:26px;margin:2px 0 8px;line-height:1.25}
h2{font-size:17px;margin:0 0 8px}
h3{font-size:15px;margin:22px 0 2px}
h3 .kind{font-weight:500;font-size:12px;color:var(--muted);border:1px solid var(--line);border-radius:10px;padding:1px 8px;margin-left:6px;vertical-align:2px}
.summary{margin:2px 0 4px}
.muted{color:var(--muted)}
p{margin:4px 0 8px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 18px;margin:8px 0 4px}
dl.meta dt{color:var(--muted)}
dl.meta dd{margin:0}
.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace;font-size:12.5px;word-break:break-all}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0 4px}
.tile{border:1px solid var(--line);border-radius:8px;padding:8px 14px;min-width:128px;background:#fff}
.tile .v{font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}
.tile .k{font-size:12px;color:var(--muted)}
ul.notes{margin:10px 0 0;padding-left:18px;color:var(--muted);font-size:13px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 22px 20px;margin:18px 0;box-shadow:0 1px 2px rgba(16,24,40,.05)}
.recommendation{border-left:4px solid var(--accent)}
.incomplete{border:2px solid #b42318;background:#fef3f2}
.incomplete h2{color:#b42318}
.headline{font-size:18px;font-weight:650;margin:0 0 8px;line-height:1.35}
ul.reasons{margin:0 0 6px;padding-left:20px}
ul.reasons li{margin:3px 0}
.chosen-design{margin-top:12px}
.badge{display:inline-block;background:var(--chosen);color:#fff;font-size:11px;font-weight:650;border-radius:10px;padding:1px 8px;margin-right:6px;vertical-align:1px}
.topo-label{font-weight:650;margin-bottom:0}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;font-size:12.5px;color:var(--muted);margin:6px 0 8px}
.legend .sw{display:inline-block;width:12px;height:12px;border-radius:3px;vertical-align:-2px;margin-right:6px}
.legend .sw.dot{border-radius:50%}
.legend .sw.ring{border-radius:50%;background:none!important;border:2.5px solid var(--chosen)}
svg.chart{display:block;width:100%;height:auto}
svg text{fill:#3e4c59;font-family:inherit}
svg .tick{font-size:12px;font-variant-numeric:tabular-nums}
svg .axis-label{font-size:13px;fill:#1f2933;font-weight:600}
svg .grid{stroke:#edf0f3}
svg .frame{stroke:#b8c0ca;fill:none}
svg .pt.other{fill:#9aa5b1;fill-opacity:.6}
svg .pt.front{fill:#1f6feb;stroke:#fff;stroke-width:1.5}
svg .pt.chosen{fill:none;stroke:#d93025;stroke-width:2.5}
svg .front-line{fill:none;stroke:#1f6feb;stroke-width:1.8;stroke-opacity:.7}
svg .chosen-label{fill:#d93025;font-size:12.5px;font-weight:650}
svg .series{fill:none;stroke-width:2.2}
svg .pt:hover,svg .seg:hover{stroke:#111;stroke-width:2}
svg .bar-label{font-size:12.5px;fill:#1f2933}
svg .bar-label.chosen-text{font-weight:700;fill:#d93025}
svg .bar-sub{font-size:11px;fill:#616e7c}
svg .bar-total{font-size:12px;fill:#1f2933;font-variant-numeric:tabular-nums}
svg .node{fill:#f8fafc;stroke:#7b8794;stroke-width:1.2}
svg .gpu{fill:#5b8def}
svg .intra{fill:#c4b5fd}
svg .nic{fill:#f59e0b}
svg .leaf{fill:#e7eef9;stroke:#7b8794}
svg .spine{fill:#dfe7d3;stroke:#7b8794}
svg .link{stroke:#94a3b8;stroke-width:.8;stroke-opacity:.7}
svg .link.up{stroke:#7b8794;stroke-opacity:.35}
svg .link.more-link{stroke-dasharray:3 3;stroke-opacity:.45}
svg .sw-text{font-size:10.5px;fill:#3e4c59}
svg .node-text{font-size:10.5px;fill:#616e7c}
svg .more{font-size:12.5px;fill:#616e7c;font-style:italic}
svg .row-title{font-size:13px;font-weight:650;fill:#1f2933}
svg .row-detail{font-size:11.5px;fill:#616e7c}
.table-wrap{max-height:720px;overflow:auto;border:1px solid var(--line);border-radius:8px}
table{border-collapse:separate;border-spacing:0;width:100%;font-size:12.5px}
th,td{padding:5px 9px;border-bottom:1px solid var(--line);text-align:left;white-space:nowrap;vertical-align:top}
td.wrap{white-space:normal;min-width:170px;max-width:300px}
th{position:sticky;top:0;background:#eef2f6;cursor:pointer;user-select:none;font-weight:650;z-index:1}
th:hover{background:#e2e8f0}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums}
th[aria-sort=ascending]::after{content:" \25B2";font-size:10px}
th[aria-sort=descending]::after{content:" \25BC";font-size:10px}
tr.infeasible td{color:#9aa5b1}
tr.chosen td{background:#fff4f2;font-weight:600}
tbody tr:hover td{background:#f3f7ff}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:24px}
)CSS";

// Sorts the table rows the page already holds; the last line tells a test the script finished.
constexpr std::string_view kScript = R"JS(
(function () {
  "use strict";
  function sortKey(cell, numeric) {
    if (!cell) return numeric ? NaN : "";
    if (!numeric) return cell.textContent;
    var v = cell.getAttribute("data-v");
    return v === null || v === "" ? NaN : Number(v);
  }
  function sortBy(table, th, col) {
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var numeric = th.getAttribute("data-type") === "num";
    var body = table.tBodies[0];
    var rows = Array.prototype.map.call(body.rows, function (r, i) {
      return { row: r, key: sortKey(r.cells[col], numeric), index: i };
    });
    rows.sort(function (a, b) {
      var c;
      if (numeric) {
        var am = isNaN(a.key), bm = isNaN(b.key);
        c = am || bm ? (am === bm ? 0 : am ? 1 : -1) : asc ? a.key - b.key : b.key - a.key;
      } else {
        c = a.key.localeCompare(b.key, "en", { numeric: true });
        if (!asc) c = -c;
      }
      return c !== 0 ? c : a.index - b.index;
    });
    var frag = document.createDocumentFragment();
    rows.forEach(function (r) { frag.appendChild(r.row); });
    body.appendChild(frag);
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () { sortBy(table, th, col); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th, col); }
      });
    });
  });
  document.body.dataset.reportReady = "1";
})();
)JS";

}  // namespace

std::string plan_report_html(const nlohmann::json& result, const std::string& extra_html) {
  if (!result.is_object()) throw std::invalid_argument("plan report: the plan result must be a JSON object");
  const Plan plan = read_plan(result);
  const std::string name = text(field(result, "plan"), "name");
  static const std::string script_hash = sha256_base64(kScript);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format(
      R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; )"
      R"(script-src 'sha256-{}'; img-src data:; base-uri 'none'; form-action 'none'">)"
      "\n",
      script_hash);
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>{}</title>\n", esc("gpufabric plan: " + (name.empty() ? "unnamed" : name) +
                                                (incomplete(result) ? " (incomplete search)" : "")));
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n<main>\n";
  out += incomplete_section(result);
  out += header_section(result, plan);
  out += recommendation_section(result, plan);
  out += pareto_section(plan);
  out += scaling_section(field(result, "scaling"));
  out += breakdown_section(plan);
  out += topology_section(field(result, "topology"), plan);
  out += table_section(plan);
  if (!extra_html.empty()) out += "<section>\n<h2>Cluster scheduling</h2>\n" + extra_html + "</section>\n";
  const std::string version = text(result, "model_version");
  out +=
      fmt::format("<footer>Generated by {}. This page is self-contained and loads nothing from the network.</footer>\n",
                  esc(version.empty() ? "gpufabric" : version));
  out += "</main>\n<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace gf::report
