#include "validate/generalisation.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "band/band_class.hpp"

namespace gf::validate {

namespace {

ErrorGroup group_of(std::string name, const std::vector<const ScoredRow*>& rows) {
  ErrorGroup g;
  g.name = std::move(name);
  g.rows = static_cast<int>(rows.size());
  for (const auto* r : rows) {
    g.mape += std::abs(r->error);
    g.bias += r->error;
  }
  if (g.rows > 0) {
    g.mape /= g.rows;
    g.bias /= g.rows;
  }
  return g;
}

std::set<std::string> calibration_sources(const std::vector<ScoredRow>& rows) {
  std::set<std::string> s;
  for (const auto& r : rows)
    if (r.calibration) s.insert(r.source);
  return s;
}

// The q-quantile of sorted values, interpolated between the two nearest ranks (Hyndman and
// Fan's type 7, what numpy and R give by default).
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 1.0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// The document a collective row cites: its source up to the parenthesised detail (commit,
// section), so rows of one table or README are one source.
std::string document_of(const std::string& source) {
  const auto paren = source.find(" (");
  return paren == std::string::npos ? source : source.substr(0, paren);
}

}  // namespace

Generalisation generalise(const std::string& suite, const std::vector<ScoredRow>& rows) {
  Generalisation g;
  g.suite = suite;
  const auto cal = calibration_sources(rows);
  g.calibration_sources.assign(cal.begin(), cal.end());
  std::vector<const ScoredRow*> all, held;
  std::map<std::string, std::vector<const ScoredRow*>> by_source;
  std::vector<std::string> class_order;
  std::map<std::string, std::vector<const ScoredRow*>> by_class;
  for (const auto& r : rows) {
    all.push_back(&r);
    by_source[r.source].push_back(&r);
    if (cal.contains(r.source)) {
      ++g.calibration_rows;
      continue;
    }
    held.push_back(&r);
    for (const auto& c : r.classes) {
      if (!by_class.contains(c)) class_order.push_back(c);
      by_class[c].push_back(&r);
    }
  }
  const ErrorGroup a = group_of("all", all), h = group_of("held out", held);
  g.rows = a.rows;
  g.mape = a.mape;
  g.held_out_rows = h.rows;
  g.held_out_mape = h.mape;
  for (const auto& [name, rs] : by_source) {
    g.by_source.push_back(group_of(name, rs));
    g.by_source.back().calibration = cal.contains(name);
  }
  std::sort(class_order.begin(), class_order.end());
  for (const auto& c : class_order) g.by_class.push_back(group_of(c, by_class[c]));
  // Each held-out source against bands computed without it.
  for (const auto& [source, its_rows] : by_source) {
    if (cal.contains(source)) continue;
    std::vector<ScoredRow> others;
    for (const auto& r : rows)
      if (r.source != source) others.push_back(r);
    const band::BandTable table(compute_bands(suite, others));
    for (const auto* r : its_rows) {
      const band::Band b = table.lookup(suite, r->classes);
      if (!b.validated()) continue;
      ++g.band_checked;
      if (r->ratio >= b.ratio_low && r->ratio <= b.ratio_high) ++g.band_inside;
    }
  }
  return g;
}

// A new source's rows differ from the model in two ways: the source's own offset (its cluster,
// software and how it measured) and the scatter of its rows about that offset. The band is the
// spread of the two together, each source weighing alike: every source's mean log ratio plus
// every row's deviation from its own source's mean (a two-level bootstrap), so a class of one
// well-sampled source does not pass for a class that knows how sources differ.
std::vector<band::Band> compute_bands(const std::string& suite, const std::vector<ScoredRow>& rows) {
  const auto cal = calibration_sources(rows);
  std::map<std::string, std::map<std::string, std::vector<double>>> logs;  // class -> source -> log ratios
  for (const auto& r : rows) {
    if (cal.contains(r.source)) continue;
    for (const auto& c : r.classes) logs[c][r.source].push_back(std::log(r.ratio));
  }
  std::vector<band::Band> out;
  for (const auto& [cls, by_source] : logs) {
    band::Band b;
    b.suite = suite;
    b.cls = cls;
    b.sources = static_cast<int>(by_source.size());
    std::vector<double> offsets, scatter;
    for (const auto& [source, v] : by_source) {
      b.rows += static_cast<int>(v.size());
      double mean = 0;
      for (const double x : v) mean += x;
      mean /= static_cast<double>(v.size());
      offsets.push_back(mean);
      // Deviations from a mean of n rows fall short of the rows' own spread by (n-1)/n in variance.
      const double n = static_cast<double>(v.size());
      const double widen = n > 1 ? std::sqrt(n / (n - 1)) : 1.0;
      for (const double x : v) scatter.push_back((x - mean) * widen);
    }
    // A new source is one more draw of the offset, about a centre known only from k sources: its
    // deviation has (1 + 1/k) times the offsets' variance, itself estimated with k - 1 degrees of
    // freedom, so the k sources' spread about their mean is widened by sqrt((k + 1) / (k - 1)),
    // the normal prediction interval's factor (without its Student-t quantile). Without it, bands
    // of the few sources most classes have covered 88% of a held-out source's rows against 95%.
    if (offsets.size() > 1) {
      const double k = static_cast<double>(offsets.size());
      double centre = 0;
      for (const double o : offsets) centre += o;
      centre /= k;
      const double widen = std::sqrt((k + 1) / (k - 1));
      for (double& o : offsets) o = centre + (o - centre) * widen;
    }
    if (b.validated()) {
      std::vector<double> both;
      both.reserve(offsets.size() * scatter.size());
      for (const double o : offsets)
        for (const double w : scatter) both.push_back(o + w);
      std::sort(both.begin(), both.end());
      b.ratio_low = std::exp(quantile(both, (1.0 - band::kCoverage) / 2));
      b.ratio_high = std::exp(quantile(both, 1.0 - (1.0 - band::kCoverage) / 2));
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::string bands_yaml(const std::vector<band::Band>& bands) {
  std::string s =
      "# GENERATED by `gpufabric validate --bands` from the validation suites; do not edit by hand.\n"
      "# The CTest test error_bands_current fails when the model or the rows have moved and this file\n"
      "# was not regenerated (`make bands`).\n"
      "#\n"
      "# Each band: the held-out validation rows of one class (rows of sources that set no model\n"
      "# constant), and the 2.5th and 97.5th percentiles of measured / predicted for a new source:\n"
      "# every source's mean offset plus every row's scatter about its own source's mean, each widened\n"
      "# for the mean it was taken about (offsets by sqrt((k+1)/(k-1)) for k sources, a source's rows\n"
      "# by sqrt(n/(n-1)) for its n rows). The class's\n"
      "# quantity is a rate for training and serving throughput, a time for serving latencies and\n"
      "# collectives. A class with fewer than min_rows rows or min_sources sources carries no interval: a command "
      "reports\n"
      "# it as unvalidated. See src/band/error_band.hpp.\n";
  s += fmt::format("schema_version: 1\ncoverage: {}\nmin_rows: {}\nmin_sources: {}\n", band::kCoverage, band::kMinRows,
                   band::kMinSources);
  s += "method: leave-one-source-out (sources with a calibration row left out), two-level (source offset + "
       "scatter), widened for small samples\nbands:\n";
  for (const auto& b : bands) {
    s += fmt::format("  - {{suite: {}, class: \"{}\", rows: {}, sources: {}", b.suite, b.cls, b.rows, b.sources);
    if (b.validated()) s += fmt::format(", ratio_low: {:.4f}, ratio_high: {:.4f}", b.ratio_low, b.ratio_high);
    s += "}\n";
  }
  return s;
}

std::vector<ScoredRow> scored(const std::vector<TrainingCheck>& checks) {
  std::vector<ScoredRow> out;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) continue;
    ScoredRow r;
    r.id = c.id;
    r.source = c.source_id;
    r.classes = band::training_classes(c.gpu, c.params_b, c.moe);
    r.error = c.error;
    r.ratio = c.measured / c.predicted;  // every training metric is a rate
    r.calibration = c.calibration;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ScoredRow> scored(const std::vector<ServingCheck>& checks) {
  std::vector<ScoredRow> out;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) continue;
    const bool ttft = c.metric.starts_with("TTFT"), tpot = c.metric.starts_with("TPOT");
    const bool throughput = c.metric.starts_with("output tok/s");
    // A server row's throughput is the offered rate whenever the engine keeps up: not a test of
    // the model's throughput (the validation report gives those rows apart).
    if (!ttft && !tpot && (!throughput || c.scenario == "server")) continue;
    ScoredRow r;
    r.id = c.id + " " + c.metric;
    r.source = c.source_id;
    r.classes = band::serving_classes(ttft   ? band::ServingMetric::ttft
                                      : tpot ? band::ServingMetric::tpot
                                             : band::ServingMetric::throughput,
                                      c.gpu);
    r.error = c.error;
    r.ratio = c.measured / c.predicted;
    r.calibration = c.calibration;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ScoredRow> scored(const std::vector<CollectiveCheck>& checks) {
  std::vector<ScoredRow> out;
  for (const auto& c : checks) {
    if (!c.row.excluded.empty()) continue;
    ScoredRow r;
    r.id = c.row.id;
    r.source = document_of(c.row.source);
    r.classes = band::collective_classes(c.row.size_bytes, c.path);
    r.error = c.error;
    // The class's quantity is the time: a bus bandwidth measured at 80% of the prediction is a
    // time 1.25 x the predicted one.
    r.ratio = c.metric == "time_us" ? c.measured / c.predicted : c.predicted / c.measured;
    r.calibration = c.row.calibration;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ScoredRow> scored(const std::vector<PathResult>& results) {
  std::vector<ScoredRow> out;
  for (const auto& p : results) {
    ScoredRow r;
    r.id = p.row.id;
    r.source = document_of(p.row.source);
    r.error = p.error;
    r.ratio = 1.0 / (1.0 + p.error);
    r.calibration = p.row.calibration;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gf::validate
