#include "report/serving_validation_report.hpp"

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
  void add(double e) {
    sum += std::fabs(e);
    ++rows;
  }
  [[nodiscard]] std::string mape() const {
    return rows > 0 ? fmt::format("{:.1f}%", 100 * sum / static_cast<double>(rows)) : "-";
  }
};

bool throughput_row(const validate::ServingCheck& c) {
  return c.skipped.empty() && !c.latency && c.scenario != "server";
}

}  // namespace

double serving_throughput_mape(const std::vector<validate::ServingCheck>& checks) {
  Group g;
  for (const auto& c : checks)
    if (throughput_row(c)) g.add(c.error);
  return g.rows > 0 ? g.sum / static_cast<double>(g.rows) : 0.0;
}

std::string serving_validation_text(const std::vector<validate::ServingCheck>& checks) {
  using A = TextTable::Align;
  TextTable t({"id", "GPUs", "scenario", "metric", "measured", "predicted", "error", "bound"},
              {A::left, A::right, A::left, A::left, A::right, A::right, A::right, A::left});
  std::map<std::string, Group> by_source, by_gpu, latency;
  Group all, server;
  std::map<std::string, long> skipped;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) {
      ++skipped[c.skipped.substr(0, c.skipped.find(':'))];
      continue;
    }
    t.add_row({c.id, std::to_string(c.gpus), c.scenario, c.metric, fmt::format("{:.4g}", c.measured),
               fmt::format("{:.4g}", c.predicted), fmt::format("{:+.1f}%", 100 * c.error), c.bound});
    if (c.latency)
      latency[c.metric.substr(0, 4)].add(c.error);
    else if (c.scenario == "server")
      server.add(c.error);
    else {
      by_source[c.source_id].add(c.error);
      by_gpu[c.gpu].add(c.error);
      all.add(c.error);
    }
  }
  std::string out = t.render();
  TextTable g({"throughput (offline, concurrency)", "rows", "MAPE"}, {A::left, A::right, A::right});
  for (const auto& [s, v] : by_source) g.add_row({"source " + s, std::to_string(v.rows), v.mape()});
  for (const auto& [s, v] : by_gpu) g.add_row({"GPU " + s, std::to_string(v.rows), v.mape()});
  g.add_row({"all", std::to_string(all.rows), all.mape()});
  out += '\n' + g.render();
  TextTable l({"reported apart", "rows", "MAPE"}, {A::left, A::right, A::right});
  l.add_row({"server rows: output tok/s at the offered rate", std::to_string(server.rows), server.mape()});
  for (const auto& [k, v] : latency) l.add_row({"latency: " + k, std::to_string(v.rows), v.mape()});
  out += '\n' + l.render();
  out += "\nskipped (what the serving model does not take):\n";
  for (const auto& [why, n] : skipped) out += fmt::format("  {:3d} rows: {}\n", n, why);
  return out;
}

std::string serving_validation_json(const std::vector<validate::ServingCheck>& checks) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : checks) {
    nlohmann::json r{{"id", c.id},   {"source", c.source_id}, {"model", c.model},
                     {"gpu", c.gpu}, {"gpus", c.gpus},        {"scenario", c.scenario}};
    if (c.skipped.empty()) {
      r["metric"] = c.metric;
      r["latency"] = c.latency;
      r["measured"] = c.measured;
      r["predicted"] = c.predicted;
      r["error"] = c.error;
      r["bound"] = c.bound;
    } else {
      r["skipped"] = c.skipped;
    }
    rows.push_back(r);
  }
  return nlohmann::json{{"rows", rows}, {"throughput_mape", serving_throughput_mape(checks)}}.dump(2) + "\n";
}

}  // namespace gf::report
