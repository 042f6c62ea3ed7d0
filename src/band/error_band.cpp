#include "band/error_band.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <cmath>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::band {

namespace {

constexpr const char* kFile = "data/validation/error_bands.yaml";

// "+21%", "-8%", "0%": whole percents, as the bands are read (and as their rows support).
std::string percent(double fraction) {
  const long p = std::lround(fraction * 100.0);
  return p > 0 ? fmt::format("+{}%", p) : fmt::format("{}%", p);
}

}  // namespace

Interval interval(const Band& b, double predicted, Direction d) {
  Interval i;
  if (d == Direction::same) {
    i.low = predicted * b.ratio_low;
    i.high = predicted * b.ratio_high;
  } else {
    // The reciprocal quantity: measured / predicted of it is predicted / measured of the band's.
    i.low = predicted / b.ratio_high;
    i.high = predicted / b.ratio_low;
  }
  i.low_fraction = predicted != 0 ? i.low / predicted - 1.0 : 0.0;
  i.high_fraction = predicted != 0 ? i.high / predicted - 1.0 : 0.0;
  return i;
}

std::string describe(const Band& b, Direction d) {
  const std::string like = fmt::format("{} row{} like this: {}", b.rows, b.rows == 1 ? "" : "s", b.cls);
  if (!b.validated()) {
    const std::string from = b.rows > 0 && b.sources < kMinSources
                                 ? fmt::format(" from {} source{}", b.sources, b.sources == 1 ? "" : "s")
                                 : std::string();
    return fmt::format("(unvalidated: {} row{}{} like this: {})", b.rows, b.rows == 1 ? "" : "s", from, b.cls);
  }
  const Interval i = interval(b, 1.0, d);
  return fmt::format("({} .. {}; {})", percent(i.low_fraction), percent(i.high_fraction), like);
}

std::string describe_short(const Band& b, Direction d) {
  if (!b.validated()) return fmt::format("unvalidated ({})", b.rows);
  const Interval i = interval(b, 1.0, d);
  return fmt::format("{}..{} ({})", percent(i.low_fraction), percent(i.high_fraction), b.rows);
}

Band BandTable::lookup(std::string_view suite, const std::vector<std::string>& classes) const {
  // Unvalidated: the class with the most rows, so the answer says how close it came.
  Band fallback;
  fallback.suite = std::string(suite);
  fallback.cls = classes.empty() ? std::string() : classes.front();
  for (const auto& cls : classes) {
    for (const auto& b : bands_) {
      if (b.suite != suite || b.cls != cls) continue;
      if (b.validated()) return b;
      if (b.rows > fallback.rows) fallback = b;
    }
  }
  return fallback;
}

BandTable parse_band_table(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  Fields top(root, file, "", {"schema_version", "coverage", "min_rows", "min_sources", "method", "bands"});
  if (top.integer("schema_version", 1, 1) != 1) top.fail("schema_version", "unknown version", "1");
  std::vector<Band> bands;
  for (const auto& n : as_list(top.node("bands"), file, "bands")) {
    Fields f(n, file, "bands[]", {"suite", "class", "rows", "sources", "ratio_low", "ratio_high"});
    Band b;
    b.suite = f.choice("suite", {"training", "serving", "collectives"});
    b.cls = f.text("class");
    b.rows = static_cast<int>(f.integer("rows", 0, 1000000));
    b.sources = static_cast<int>(f.integer("sources", 0, 1000000));
    if (b.validated()) {
      b.ratio_low = f.positive("ratio_low");
      b.ratio_high = f.positive("ratio_high");
      if (b.ratio_high < b.ratio_low) f.fail("ratio_high", "below ratio_low", "ratio_low <= ratio_high");
    }
    bands.push_back(std::move(b));
  }
  return BandTable(std::move(bands));
}

const BandTable& BandTable::builtin() {
  static const BandTable table = [] {
    if (const auto text = data::find(kFile)) return parse_band_table(std::string(*text), kFile);
    return BandTable({});
  }();
  return table;
}

}  // namespace gf::band
