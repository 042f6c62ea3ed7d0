#include "report/time_to_train_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace gf::report {

double time_to_train_mape(const std::vector<validate::TimeToTrainCheck>& checks) {
  double sum = 0;
  long n = 0;
  for (const auto& c : checks) {
    if (!c.skipped.empty()) continue;
    sum += std::abs(c.error);
    ++n;
  }
  return n ? sum / static_cast<double>(n) : 0;
}

std::string time_to_train_text(const std::vector<validate::TimeToTrainCheck>& checks) {
  std::string out =
      "# Time to train: the planner's predicted GPU-hours for published pre-training runs (every layout searched\n"
      "# unless the row gives the published one; goodput included) against the GPU-hours the source reports.\n";
  out += fmt::format("{:<16} {:<16} {:>6} {:<9} {:>13} {:>13} {:>8} {:>6} {:>8}  {}\n", "id", "model", "GPUs", "preset",
                     "measured h", "predicted h", "error", "MFU", "goodput", "layout");
  for (const auto& c : checks) {
    if (!c.skipped.empty()) continue;
    out += fmt::format("{:<16} {:<16} {:>5}{} {:<9} {:>13.4g} {:>13.4g} {:>+7.1f}% {:>5.1f}% {:>7.1f}%  {}\n", c.row.id,
                       c.row.model, c.row.gpus, c.row.gpus_assumed ? "*" : " ", c.row.preset, c.measured_gpu_hours,
                       c.predicted_gpu_hours, 100 * c.error, 100 * c.mfu, 100 * c.goodput, c.layout);
  }
  long evaluated = 0;
  for (const auto& c : checks) evaluated += c.skipped.empty() ? 1 : 0;
  out += fmt::format("\n{} rows, MAPE {:.1f}% (* GPU count not given by the source: assumed, see the row's note)\n",
                     evaluated, 100 * time_to_train_mape(checks));
  for (const auto& c : checks) {
    if (!c.skipped.empty()) out += fmt::format("skipped {}: {}\n", c.row.id, c.skipped);
  }
  return out;
}

std::string time_to_train_json(const std::vector<validate::TimeToTrainCheck>& checks) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : checks) {
    nlohmann::json j{{"id", c.row.id},
                     {"model", c.row.model},
                     {"preset", c.row.preset},
                     {"gpus", c.row.gpus},
                     {"gpus_assumed", c.row.gpus_assumed},
                     {"source", c.row.source}};
    if (c.skipped.empty()) {
      j["measured_gpu_hours"] = c.measured_gpu_hours;
      j["predicted_gpu_hours"] = c.predicted_gpu_hours;
      j["predicted_days"] = c.predicted_days;
      j["error"] = c.error;
      j["mfu"] = c.mfu;
      j["goodput"] = c.goodput;
      j["layout"] = c.layout;
    } else {
      j["skipped"] = c.skipped;
    }
    rows.push_back(j);
  }
  return nlohmann::json{{"rows", rows}, {"mape", time_to_train_mape(checks)}}.dump(2) + "\n";
}

}  // namespace gf::report
