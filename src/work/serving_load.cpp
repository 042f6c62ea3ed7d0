#include "work/serving_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"

namespace gf::work {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// The comma-separated fields of one line. Three plain numbers per line: a CSV library would
// bring nothing a split does not (no quoting or escapes occur in these files).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, ',')) out.push_back(trim(f));
  return out;
}

bool number(const std::string& s, double& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

bool integer(const std::string& s, long& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end;
}

// Lines that carry data: not blank, not a comment, not a header (first field not a number).
template <typename F>
void each_data_line(const std::string& text, const std::string& file, F&& f) {
  // Rows are echoed in error messages, which may reach JSON output: UTF-8 only.
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string::npos)
    throw InputError(
        {file, 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(bad), '\n')), 0}, "",
        fmt::format("byte 0x{:02x} is not valid UTF-8", static_cast<unsigned char>(text[bad])),
        "UTF-8 (or ASCII) text");
  std::stringstream ss(text);
  std::string line;
  int n = 0;
  bool seen_data = false;
  while (std::getline(ss, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const auto parts = fields(t);
    double first = 0;
    if (!seen_data && !number(parts[0], first)) continue;  // a header line
    seen_data = true;
    f(parts, SourceLocation{file, n, 0});
  }
}

// Token counts are bounded where they are read, so that no sum of them can overflow.
void check_tokens(const SourceLocation& at, const std::string& field, long tokens) {
  if (tokens > kMaxRequestTokens)
    throw InputError(at, field, fmt::format("{} tokens", tokens),
                     fmt::format("at most {} tokens (8 x the longest context in the catalog)", kMaxRequestTokens));
}

}  // namespace

LengthDistribution LengthDistribution::from_histogram(const std::string& text, const std::string& file) {
  LengthDistribution d;
  double total = 0;
  each_data_line(text, file, [&](const std::vector<std::string>& p, const SourceLocation& at) {
    long tokens = 0;
    double weight = 0;
    if (p.size() != 2 || !integer(p[0], tokens) || !number(p[1], weight) || tokens < 1 || weight < 0)
      throw InputError(at, "histogram row", fmt::format("'{}'", join(p, ",")),
                       "tokens,weight: a positive whole number of tokens and a non-negative weight");
    check_tokens(at, "tokens", tokens);
    if (d.bins_.size() >= static_cast<std::size_t>(kMaxRequests))
      throw InputError(at, "histogram", fmt::format("more than {} rows", kMaxRequests),
                       fmt::format("at most {} lengths", kMaxRequests));
    total += weight;
    d.bins_.emplace_back(tokens, total);
  });
  if (d.bins_.empty() || !(total > 0))
    throw InputError({file, 0, 0}, "histogram", "no rows with positive weight", "lines of tokens,weight");
  for (auto& b : d.bins_) b.second /= total;
  return d;
}

long LengthDistribution::sample(std::mt19937_64& rng) const {
  if (bins_.empty()) return fixed_;
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  const auto it = std::lower_bound(bins_.begin(), bins_.end(), u,
                                   [](const std::pair<long, double>& b, double v) { return b.second < v; });
  return it == bins_.end() ? bins_.back().first : it->first;
}

double LengthDistribution::mean() const {
  if (bins_.empty()) return static_cast<double>(fixed_);
  double m = 0, prev = 0;
  for (const auto& [t, c] : bins_) {
    m += static_cast<double>(t) * (c - prev);
    prev = c;
  }
  return m;
}

long LengthDistribution::max() const {
  if (bins_.empty()) return fixed_;
  long m = 0;
  double prev = 0;
  for (const auto& [t, c] : bins_) {
    if (c > prev) m = std::max(m, t);
    prev = c;
  }
  return m;
}

std::string LengthDistribution::describe() const {
  if (bins_.empty()) return fmt::format("{}", fixed_);
  return fmt::format("histogram of {} lengths, mean {:.0f}, max {}", bins_.size(), mean(), max());
}

const char* to_string(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::poisson: return "poisson";
    case ArrivalKind::concurrency: return "concurrency";
    case ArrivalKind::offline: return "offline";
    case ArrivalKind::trace: return "trace";
  }
  return "?";
}

std::vector<Request> generate_requests(const LoadSpec& load) {
  if (load.kind == ArrivalKind::trace) return load.trace;
  std::mt19937_64 rng(load.seed);
  std::vector<Request> out;
  out.reserve(static_cast<std::size_t>(std::max<long>(0, load.requests)));
  std::exponential_distribution<double> gap(load.kind == ArrivalKind::poisson ? load.rate : 1.0);
  double t = 0;
  std::mt19937_64 ramp(load.seed ^ 0x9e3779b97f4a7c15ULL);  // apart from the lengths' draws
  for (long i = 0; i < load.requests; ++i) {
    Request r;
    if (load.kind == ArrivalKind::poisson) {
      if (i > 0) t += gap(rng);
      r.arrival_s = t;
    } else if (load.kind == ArrivalKind::concurrency && i < load.concurrency && load.ramp_up_s > 0) {
      r.arrival_s = std::uniform_real_distribution<double>(0.0, load.ramp_up_s)(ramp);
    }
    r.input = load.input.sample(rng);
    r.output = load.output.sample(rng);
    out.push_back(r);
  }
  if (load.kind == ArrivalKind::concurrency)
    std::sort(out.begin(), out.begin() + std::min<long>(load.concurrency, static_cast<long>(out.size())),
              [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  return out;
}

double planned_steps(const LoadSpec& load, long max_batch_tokens) {
  const auto chunks = [&](double prompt) { return std::ceil(prompt / static_cast<double>(max_batch_tokens)); };
  if (load.kind == ArrivalKind::trace) {
    double steps = 0;
    for (const Request& r : load.trace) steps += static_cast<double>(r.output) + chunks(static_cast<double>(r.input));
    return steps;
  }
  return static_cast<double>(load.requests) * (load.output.mean() + chunks(load.input.mean()));
}

std::vector<Request> parse_trace(const std::string& text, const std::string& file) {
  std::vector<Request> out;
  each_data_line(text, file, [&](const std::vector<std::string>& p, const SourceLocation& at) {
    Request r;
    if (p.size() != 3 || !number(p[0], r.arrival_s) || !integer(p[1], r.input) || !integer(p[2], r.output) ||
        r.arrival_s < 0 || r.input < 1 || r.output < 1)
      throw InputError(at, "trace row", fmt::format("'{}'", join(p, ",")),
                       "arrival_s,input_tokens,output_tokens: a time of at least 0 s and two positive whole numbers");
    check_tokens(at, "input_tokens", r.input);
    check_tokens(at, "output_tokens", r.output);
    if (out.size() >= static_cast<std::size_t>(kMaxRequests))
      throw InputError(at, "trace", fmt::format("more than {} requests", kMaxRequests),
                       fmt::format("at most {} rows per simulated run", kMaxRequests));
    if (!out.empty() && r.arrival_s < out.back().arrival_s)
      throw InputError(at, "arrival_s",
                       fmt::format("{} comes before the previous row's {}", r.arrival_s, out.back().arrival_s),
                       "arrival times in non-decreasing order");
    out.push_back(r);
  });
  if (out.empty())
    throw InputError({file, 0, 0}, "trace", "no requests", "lines of arrival_s,input_tokens,output_tokens");
  return out;
}

}  // namespace gf::work
