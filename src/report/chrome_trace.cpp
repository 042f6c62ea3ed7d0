#include "report/chrome_trace.hpp"

#include <map>
#include <nlohmann/json.hpp>

namespace gf::report {

std::string chrome_trace(const std::vector<work::StepEvent>& events, const std::string& process,
                         const std::vector<std::pair<std::string, std::string>>& metadata) {
  nlohmann::json trace;
  nlohmann::json list = nlohmann::json::array();
  list.push_back({{"ph", "M"}, {"pid", 0}, {"tid", 0}, {"name", "process_name"}, {"args", {{"name", process}}}});
  // Tracks in the order they first appear, the compute stream first.
  std::map<std::string, int> tid;
  auto track = [&](const std::string& name) {
    auto [it, fresh] = tid.try_emplace(name, static_cast<int>(tid.size()) + 1);
    if (fresh) {
      list.push_back(
          {{"ph", "M"}, {"pid", 0}, {"tid", it->second}, {"name", "thread_name"}, {"args", {{"name", name}}}});
      list.push_back({{"ph", "M"},
                      {"pid", 0},
                      {"tid", it->second},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", it->second}}}});
    }
    return it->second;
  };
  track(work::kComputeTrack);
  for (const auto& e : events) {
    if (!(e.duration_s > 0)) continue;
    list.push_back({{"ph", "X"},
                    {"pid", 0},
                    {"tid", track(e.track)},
                    {"name", e.name},
                    {"ts", e.start_s * 1e6},
                    {"dur", e.duration_s * 1e6}});
  }
  trace["traceEvents"] = std::move(list);
  trace["displayTimeUnit"] = "ms";
  nlohmann::json other = nlohmann::json::object();
  for (const auto& [k, v] : metadata) other[k] = v;
  trace["otherData"] = std::move(other);
  return trace.dump() + "\n";
}

}  // namespace gf::report
