#include "sched/import/slurm_tres.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>
#include <vector>

#include <fmt/format.h>

namespace gf::sched {

namespace {

constexpr long kMaxCount = 1'000'000'000;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = std::min(s.find(sep, b), s.size());
    out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

long count(const std::string& s, const SourceLocation& where, const std::string& field, const std::string& entry) {
  long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0 || v > kMaxCount)
    throw InputError(where, field, fmt::format("'{}' has no whole count", entry),
                     "name=count entries separated by commas, e.g. cpu=8,gres/gpu=4,mem=64G");
  return v;
}

// "64G", "31000M", "62.50G", "1.5T": Slurm's memory sizes, in MiB (its units are binary).
long memory_mib(const std::string& s, const SourceLocation& where, const std::string& field) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const std::string unit(p, s.data() + s.size());
  double scale = -1;
  if (unit.empty() || unit == "M") scale = 1;
  if (unit == "K") scale = 1.0 / 1024;
  if (unit == "G") scale = 1024;
  if (unit == "T") scale = 1024.0 * 1024;
  if (unit == "P") scale = 1024.0 * 1024 * 1024;
  if (s.empty() || ec != std::errc() || scale < 0 || !std::isfinite(v) || v < 0 || v * scale > 1e15)
    throw InputError(where, field, fmt::format("mem={} is not a memory size", s),
                     "a number with an optional K, M, G, T or P (binary units), e.g. mem=64G");
  return std::lround(v * scale);
}

// Sets gpus and gpu_type from the untyped total and the typed counts.
void set_gpus(SlurmResources& r, long untyped, long typed, const std::set<std::string>& types) {
  r.gpus = untyped >= 0 ? untyped : typed;
  if (types.size() == 1) r.gpu_type = *types.begin();
}

}  // namespace

SlurmResources parse_tres(const std::string& text, const SourceLocation& where, const std::string& field) {
  SlurmResources r;
  long untyped = -1, typed = 0;
  std::set<std::string> types;
  if (text.empty()) return r;
  for (const auto& entry : split(text, ',')) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(where, field, fmt::format("'{}' is not name=count", entry),
                       "name=count entries separated by commas, e.g. cpu=8,gres/gpu=4,mem=64G");
    const std::string name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name == "gres/gpu") {
      untyped = count(value, where, field, entry);
    } else if (name.starts_with("gres/gpu:")) {
      typed += count(value, where, field, entry);
      types.insert(name.substr(9));
    } else if (name == "cpu") {
      r.cpus = count(value, where, field, entry);
    } else if (name == "mem") {
      r.memory_mib = memory_mib(value, where, field);
    }
  }
  set_gpus(r, untyped, typed, types);
  return r;
}

SlurmResources parse_gres(const std::string& text, const SourceLocation& where, const std::string& field) {
  SlurmResources r;
  long untyped = -1, typed = 0;
  std::set<std::string> types;
  if (text.empty() || text == "(null)") return r;
  for (const auto& entry : split(text, ',')) {
    const std::string bare = entry.substr(0, entry.find('('));  // "gpu:2(IDX:0-1)" -> "gpu:2"
    const auto parts = split(bare, ':');
    if (parts.front() != "gpu") continue;
    if (parts.size() == 1) {
      untyped = std::max(untyped, 0L) + 1;  // "gpu" alone is one
    } else if (parts.size() == 2) {
      // "gpu:4", or "gpu:a100" (one of a type)
      if (!parts[1].empty() && std::isdigit(static_cast<unsigned char>(parts[1].front())))
        untyped = std::max(untyped, 0L) + count(parts[1], where, field, entry);
      else {
        typed += 1;
        types.insert(parts[1]);
      }
    } else if (parts.size() == 3) {
      typed += count(parts[2], where, field, entry);
      types.insert(parts[1]);
    } else {
      throw InputError(where, field, fmt::format("'{}' is not a GRES entry", entry), "gpu:COUNT or gpu:TYPE:COUNT");
    }
  }
  if (untyped >= 0 && typed > 0) untyped += typed;  // GRES entries of one job do not repeat one another
  set_gpus(r, untyped, typed, types);
  return r;
}

}  // namespace gf::sched
