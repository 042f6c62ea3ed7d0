#include "report/training_validation_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "report/table.hpp"

namespace gf::report {

namespace {

struct Group {
  double sum = 0;
  long rows = 0;
};

}  // namespace

std::string training_validation_text(const std::vector<validate::TrainingCheck>& checks) {
  TextTable t({"id", "model", "GPUs", "metric", "measured", "predicted", "error"},
              {TextTable::Align::left, TextTable::Align::left, TextTable::Align::right, TextTable::Align::left,
               TextTable::Align::right, TextTable::Align::right, TextTable::Align::right});
  std::map<std::string, Group> by_source;
  Group all;
  std::map<std::string, long> skipped;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) {
      ++skipped[c.skipped.substr(0, c.skipped.find(':'))];
      continue;
    }
    t.add_row({c.id, c.model, std::to_string(c.gpus), c.metric, fmt::format("{:.4g}", c.measured),
               fmt::format("{:.4g}", c.predicted), fmt::format("{:+.1f}%", 100 * c.error)});
    by_source[c.source_id].sum += std::fabs(c.error);
    ++by_source[c.source_id].rows;
    all.sum += std::fabs(c.error);
    ++all.rows;
  }
  std::string out = t.render();
  TextTable g({"source", "rows", "MAPE"}, {TextTable::Align::left, TextTable::Align::right, TextTable::Align::right});
  for (const auto& [s, v] : by_source)
    g.add_row({s, std::to_string(v.rows), fmt::format("{:.1f}%", 100 * v.sum / static_cast<double>(v.rows))});
  if (all.rows > 0)
    g.add_row({"all", std::to_string(all.rows), fmt::format("{:.1f}%", 100 * all.sum / static_cast<double>(all.rows))});
  out += '\n';
  out += g.render();
  out += "\nskipped (what the training model does not cover yet):\n";
  for (const auto& [why, n] : skipped) out += fmt::format("  {:3d} rows: {}\n", n, why);
  return out;
}

std::string training_validation_json(const std::vector<validate::TrainingCheck>& checks) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : checks) {
    nlohmann::json r{{"id", c.id}, {"source", c.source_id}, {"model", c.model}, {"gpus", c.gpus}};
    if (c.skipped.empty()) {
      r["metric"] = c.metric;
      r["measured"] = c.measured;
      r["predicted"] = c.predicted;
      r["error"] = c.error;
    } else {
      r["skipped"] = c.skipped;
    }
    rows.push_back(r);
  }
  return nlohmann::json{{"rows", rows}}.dump(2) + "\n";
}

}  // namespace gf::report
