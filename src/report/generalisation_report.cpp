#include "report/generalisation_report.hpp"

#include <fmt/format.h>

#include "report/table.hpp"

namespace gf::report {

namespace {

std::string pct(double f) { return fmt::format("{:.1f}%", 100.0 * f); }
std::string signed_pct(double f) { return fmt::format("{:+.1f}%", 100.0 * f); }

const band::Band* band_named(const std::vector<band::Band>& bands, const std::string& cls) {
  for (const auto& b : bands)
    if (b.cls == cls) return &b;
  return nullptr;
}

// The band as the interval measured values fell in, relative to the prediction.
std::string band_cell(const band::Band* b) {
  if (b == nullptr || !b->validated()) return "unvalidated";
  return fmt::format("{} .. {}", signed_pct(b->ratio_low - 1.0), signed_pct(b->ratio_high - 1.0));
}

}  // namespace

std::string generalisation_text(const validate::Generalisation& g, const std::vector<band::Band>& bands) {
  using A = TextTable::Align;
  std::string s = "\nGeneralisation (" + g.suite +
                  "): in-sample is every scored row; held out leaves out every source that set a model\n"
                  "constant (leave-one-source-out: gpufabric has no refit, so such a source's rows are listed as\n"
                  "calibration, not scored). Error = (predicted - measured) / measured; bias is its mean.\n";
  TextTable head({"set", "rows", "MAPE"}, {A::left, A::right, A::right});
  head.add_row({"in-sample", std::to_string(g.rows), pct(g.mape)});
  head.add_row({"held out", std::to_string(g.held_out_rows), pct(g.held_out_mape)});
  s += head.render();
  if (g.calibration_sources.empty()) {
    s += "calibration sources: none (no row of this suite set a constant)\n";
  } else {
    s += fmt::format("calibration sources ({} rows, not in the held-out figure):\n", g.calibration_rows);
    for (const auto& c : g.calibration_sources) s += "  " + c + "\n";
  }
  if (g.band_checked > 0)
    s += fmt::format(
        "bands held out too: each source's rows against the bands computed without that source: {} of {} "
        "inside ({:.0f}%; the bands aim at {:.0f}%)\n",
        g.band_inside, g.band_checked, 100.0 * g.band_inside / g.band_checked, 100 * band::kCoverage);
  s += "\nby source (in-sample):\n";
  TextTable src({"source", "rows", "MAPE", "bias", "set"}, {A::left, A::right, A::right, A::right, A::left});
  for (const auto& e : g.by_source)
    src.add_row(
        {e.name, std::to_string(e.rows), pct(e.mape), signed_pct(e.bias), e.calibration ? "calibration" : "held out"});
  s += src.render();
  if (!g.by_class.empty()) {
    s += fmt::format(
        "\nby class (held out), with the band a command prints for it: measured / predicted - 1, {:g}th..{:g}th "
        "percentile\nfor a new source (each source's offset plus each row's scatter about its source); fewer than {} "
        "rows\nor {} sources: unvalidated. Quantity: {}.\n",
        50 * (1 - band::kCoverage), 100 - 50 * (1 - band::kCoverage), band::kMinRows, band::kMinSources,
        g.suite == "collectives" ? "time (nccl-tests' time column)"
        : g.suite == "serving"   ? "throughput a rate, TTFT and TPOT times"
                                 : "throughput, a rate");
    TextTable cls({"class", "rows", "MAPE", "bias", "band"}, {A::left, A::right, A::right, A::right, A::left});
    for (const auto& e : g.by_class)
      cls.add_row(
          {e.name, std::to_string(e.rows), pct(e.mape), signed_pct(e.bias), band_cell(band_named(bands, e.name))});
    s += cls.render();
  }
  return s;
}

nlohmann::json generalisation_json(const validate::Generalisation& g, const std::vector<band::Band>& bands) {
  nlohmann::json j;
  j["suite"] = g.suite;
  j["in_sample"] = {{"rows", g.rows}, {"mape", g.mape}};
  j["held_out"] = {{"rows", g.held_out_rows}, {"mape", g.held_out_mape}, {"method", "leave-one-source-out"}};
  j["calibration_sources"] = g.calibration_sources;
  j["calibration_rows"] = g.calibration_rows;
  j["band_coverage_held_out"] = {{"rows", g.band_checked}, {"inside", g.band_inside}};
  auto& src = j["by_source"] = nlohmann::json::array();
  for (const auto& e : g.by_source)
    src.push_back(
        {{"source", e.name}, {"rows", e.rows}, {"mape", e.mape}, {"bias", e.bias}, {"calibration", e.calibration}});
  auto& cls = j["by_class"] = nlohmann::json::array();
  for (const auto& e : g.by_class) {
    nlohmann::json c = {{"class", e.name}, {"rows", e.rows}, {"mape", e.mape}, {"bias", e.bias}};
    const auto* b = band_named(bands, e.name);
    if (b != nullptr && b->validated()) {
      c["ratio_low"] = b->ratio_low;
      c["ratio_high"] = b->ratio_high;
    } else {
      c["unvalidated"] = true;
    }
    cls.push_back(std::move(c));
  }
  return j;
}

std::string generalisation_summary_text(const std::vector<validate::Generalisation>& suites) {
  using A = TextTable::Align;
  std::string s =
      "\nGeneralisation, every suite (held out = leave-one-source-out: sources that set a constant left out):\n";
  TextTable t({"suite", "rows", "in-sample MAPE", "held-out rows", "held-out MAPE", "calibration sources",
               "inside band (held out)"},
              {A::left, A::right, A::right, A::right, A::right, A::right, A::right});
  for (const auto& g : suites)
    t.add_row({g.suite, std::to_string(g.rows), pct(g.mape), std::to_string(g.held_out_rows), pct(g.held_out_mape),
               std::to_string(g.calibration_sources.size()),
               g.band_checked > 0 ? fmt::format("{} of {}", g.band_inside, g.band_checked) : std::string("-")});
  return s + t.render();
}

nlohmann::json band_json(const band::Band& b, double predicted, band::Direction d) {
  nlohmann::json j = {{"class", b.cls}, {"rows", b.rows}, {"coverage", band::kCoverage}};
  if (!b.validated()) {
    j["unvalidated"] = true;
    return j;
  }
  const auto i = band::interval(b, predicted, d);
  j["low"] = i.low;
  j["high"] = i.high;
  return j;
}

}  // namespace gf::report
