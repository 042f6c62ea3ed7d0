#include "report/validation_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

#include "core/csv.hpp"
#include "report/table.hpp"

namespace gf::report {

namespace {
std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100.0 * fraction); }

}  // namespace

std::string validation_text(const std::vector<validate::PathResult>& results) {
  using A = TextTable::Align;
  if (results.empty()) return "No validation rows.\n";
  TextTable t({"id", "preset", "path", "pair", "type", "transport", "measured GB/s", "predicted GB/s", "error", "cal"},
              {A::left, A::left, A::left, A::left, A::left, A::left, A::right, A::right, A::right, A::left});
  for (const auto& r : results) {
    const std::string pair = r.row.path == "gpu-gpu"
                                 ? fmt::format("{}->{}", r.row.src, r.row.dst)
                                 : fmt::format("{} {}", r.row.src, r.row.remote_socket ? "remote" : "local");
    t.add_row({r.row.id, (r.row.preset.empty() ? r.row.cluster : r.row.preset) + (r.row.p2p ? "" : " p2p=off"),
               r.row.path, pair, r.route_type, r.transport, fixed(r.row.measured_GBps, 2), fixed(r.predicted_GBps, 2),
               percent(r.error), r.row.calibration ? "yes" : ""});
  }
  std::string out = "Point-to-point paths: predicted vs measured (one large copy, one direction)\n\n";
  out += t.render();
  out += "\n'cal' marks rows a catalog efficiency was set from; the independent rows are the test.\n\n";
  TextTable g({"group", "rows", "MAPE"}, {A::left, A::right, A::right});
  for (const auto& e : validate::group_errors(results)) {
    g.add_row({e.group, std::to_string(e.rows), fmt::format("{:.1f}%", 100.0 * e.mape)});
  }
  out += g.render();
  out += "\nSources:\n";
  for (const auto& r : results) out += "  " + r.row.id + ": " + r.row.source + "\n";
  return out;
}

std::string validation_json(const std::vector<validate::PathResult>& results) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) {
    rows.push_back({{"id", r.row.id},
                    {"preset", r.row.preset},
                    {"cluster", r.row.cluster},
                    {"p2p", r.row.p2p},
                    {"path", r.row.path},
                    {"src", r.row.src},
                    {"dst", r.row.dst},
                    {"remote_socket", r.row.remote_socket},
                    {"type", r.route_type},
                    {"transport", r.transport},
                    {"measured_GBps", r.row.measured_GBps},
                    {"predicted_GBps", r.predicted_GBps},
                    {"error", r.error},
                    {"calibration", r.row.calibration},
                    {"tool", r.row.tool},
                    {"source", r.row.source}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& e : validate::group_errors(results)) {
    groups.push_back({{"group", e.group}, {"rows", e.rows}, {"mape", e.mape}});
  }
  return nlohmann::json{{"rows", rows}, {"groups", groups}}.dump(2) + "\n";
}

std::string validation_csv(const std::vector<validate::PathResult>& results) {
  std::string out =
      "id,preset,p2p,path,src,dst,remote_socket,type,transport,measured_GBps,predicted_GBps,error,calibration,source\n";
  for (const auto& r : results) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{},{}\n", csv_field(r.row.id),
                       csv_field(r.row.preset.empty() ? r.row.cluster : r.row.preset), r.row.p2p, r.row.path, r.row.src,
                       r.row.path == "gpu-gpu" ? r.row.dst : -1, r.row.remote_socket, r.route_type, r.transport,
                       r.row.measured_GBps, r.predicted_GBps, r.error, r.row.calibration, csv_field(r.row.source));
  }
  return out;
}

std::vector<BandError> collective_band_errors(const std::vector<validate::CollectiveCheck>& checks) {
  std::map<std::string, std::pair<std::size_t, double>> acc;
  for (const auto& c : checks) {
    if (c.row.calibration || !c.row.excluded.empty()) continue;  // the groups measure independent rows
    const std::string scope = c.row.nodes > 1 ? "multi-node" : "single node";
    // The off-path set (clouds, HPC centres, workstations beyond the core set) has its own groups.
    const std::string set = c.row.off_path ? "off-path " : "";
    for (const std::string& g : {set + c.band, set + c.band + " " + scope, set + "all"}) {
      auto& a = acc[g];
      ++a.first;
      a.second += std::fabs(c.error);
    }
  }
  std::vector<BandError> out;
  for (const auto& [g, a] : acc) out.push_back({g, a.first, a.second / static_cast<double>(a.first)});
  return out;
}

namespace {

// The rows beyond the error bound, each with what is known of why (or that nothing is).
std::string known_misses_text(const std::vector<validate::CollectiveCheck>& checks) {
  std::string list;
  std::size_t n = 0;
  std::size_t unexplained = 0;
  for (const auto& c : checks) {
    if (!c.row.excluded.empty() || std::fabs(c.error) <= validate::kKnownMissBound) continue;
    ++n;
    if (c.row.known_miss.empty()) ++unexplained;
    list += fmt::format("  {} {}: {}\n", c.row.id, percent(c.error),
                        c.row.known_miss.empty() ? "NOT EXPLAINED" : c.row.known_miss);
  }
  if (n == 0) return fmt::format("\nEvery row is within {:.0f}%.\n", 100 * validate::kKnownMissBound);
  return fmt::format("\nRows beyond {:.0f}% ({}, {} not explained) and why:\n", 100 * validate::kKnownMissBound, n,
                     unexplained) +
         list;
}

}  // namespace

std::string collectives_text(const std::vector<validate::CollectiveCheck>& checks) {
  using A = TextTable::Align;
  if (checks.empty()) return "No collective validation rows.\n";
  TextTable t({"id", "cluster", "nodes", "ranks", "network", "nics", "-g", "forced", "op", "size", "metric", "measured",
               "predicted", "error", "model"},
              {A::left, A::left, A::right, A::right, A::left, A::right, A::right, A::left, A::left, A::right, A::left,
               A::right, A::right, A::right, A::left});
  for (const auto& c : checks) {
    const std::string forced =
        c.row.algo.empty() && c.row.proto.empty()
            ? "-"
            : (c.row.algo.empty() ? "*" : c.row.algo) + "/" + (c.row.proto.empty() ? "*" : c.row.proto);
    t.add_row({c.row.id, (c.row.preset.empty() ? c.row.cluster : c.row.preset) + (c.row.stand_in.empty() ? "" : " (s)"),
               std::to_string(c.row.nodes), std::to_string(c.row.gpus), c.network,
               c.row.nodes > 1 ? std::to_string(c.nics_per_node) : "-", std::to_string(c.row.gpus_per_process), forced,
               c.row.op, fmt::format("{:.0f}", c.row.size_bytes), c.metric, fixed(c.measured, 2), fixed(c.predicted, 2),
               percent(c.error),
               c.algorithm + "/" + c.protocol + (c.row.calibration ? " (cal)" : "") +
                   (c.row.excluded.empty() ? "" : " (excl)")});
  }
  std::string out = "Collectives: predicted vs nccl-tests (busbw for large messages, time for small)\n\n";
  out += t.render();
  out += "\n";
  TextTable g({"size band", "rows", "MAPE"}, {A::left, A::right, A::right});
  for (const auto& e : collective_band_errors(checks)) {
    g.add_row({e.group, std::to_string(e.rows), fmt::format("{:.1f}%", 100.0 * e.mape)});
  }
  out += g.render();
  out +=
      "\n(cal) rows set a model constant. (excl) rows are runs their own source calls faulty, or\n"
      "timings that are not nccl-tests' (a harness's own overhead at sizes where it dominates).\n"
      "Neither counts in the groups above; each exclusion's reason is below. (s) rows run on a\n"
      "stand-in: a preset or cluster file that differs from the measured machine, as said below.\n"
      "'forced' is the NCCL_ALGO/NCCL_PROTO the run set; '-g' the GPUs one process drove.\n";
  for (const auto& c : checks) {
    if (!c.row.excluded.empty()) out += "  excluded " + c.row.id + ": " + c.row.excluded + "\n";
  }
  for (const auto& c : checks) {
    if (!c.row.stand_in.empty()) out += "  stand-in " + c.row.id + ": " + c.row.stand_in + "\n";
  }
  out += known_misses_text(checks);
  out += "\nSources:\n";
  for (const auto& c : checks) out += "  " + c.row.id + ": " + c.row.source + "\n";
  return out;
}

std::string collectives_json(const std::vector<validate::CollectiveCheck>& checks) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : checks) {
    rows.push_back({{"id", c.row.id},
                    {"preset", c.row.preset},
                    {"cluster", c.row.cluster},
                    {"nodes", c.row.nodes},
                    {"ranks", c.row.gpus},
                    {"op", c.row.op},
                    {"size_bytes", c.row.size_bytes},
                    {"band", c.band},
                    {"metric", c.metric},
                    {"measured", c.measured},
                    {"predicted", c.predicted},
                    {"error", c.error},
                    {"algorithm", c.algorithm},
                    {"protocol", c.protocol},
                    {"network", c.network},
                    {"nics_per_node", c.nics_per_node},
                    {"gpus_per_process", c.row.gpus_per_process},
                    {"forced_algorithm", c.row.algo},
                    {"forced_protocol", c.row.proto},
                    {"stand_in", c.row.stand_in},
                    {"off_path", c.row.off_path},
                    {"excluded", c.row.excluded},
                    {"known_miss", c.row.known_miss},
                    {"source", c.row.source}});
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& e : collective_band_errors(checks))
    groups.push_back({{"group", e.group}, {"rows", e.rows}, {"mape", e.mape}});
  return nlohmann::json{{"rows", rows}, {"groups", groups}}.dump(2) + "\n";
}

namespace {

// The text's footnotes, for the CSV's comment lines: why rows are excluded or run on a stand-in
// and why rows miss by more than the bound are notes; a miss nobody has explained is a warning.
Messages collectives_messages(const std::vector<validate::CollectiveCheck>& checks) {
  Messages m;
  for (const auto& c : checks) {
    if (!c.row.excluded.empty()) m.notes.push_back("excluded " + c.row.id + ": " + c.row.excluded);
  }
  for (const auto& c : checks) {
    if (!c.row.stand_in.empty()) m.notes.push_back("stand-in " + c.row.id + ": " + c.row.stand_in);
  }
  for (const auto& c : checks) {
    if (!c.row.excluded.empty() || std::fabs(c.error) <= validate::kKnownMissBound) continue;
    const std::string miss =
        fmt::format("{} {} beyond {:.0f}%", c.row.id, percent(c.error), 100 * validate::kKnownMissBound);
    if (c.row.known_miss.empty()) {
      m.add_warning(miss + ": not explained");
    } else {
      m.notes.push_back(miss + ": " + c.row.known_miss);
    }
  }
  return m;
}

}  // namespace

std::string collectives_csv(const std::vector<validate::CollectiveCheck>& checks) {
  std::string out = csv_comment_lines(collectives_messages(checks));
  out +=
      "id,cluster,nodes,ranks,op,size_bytes,metric,measured,predicted,error,algorithm,protocol,source,calibration,"
      "excluded\n";
  for (const auto& c : checks) {
    out += fmt::format("{},{},{},{},{},{:.0f},{},{:.4f},{:.4f},{:.4f},{},{},{},{},{}\n", csv_field(c.row.id),
                       csv_field(c.row.preset.empty() ? c.row.cluster : c.row.preset), c.row.nodes, c.row.gpus,
                       c.row.op, c.row.size_bytes, c.metric, c.measured, c.predicted, c.error, c.algorithm, c.protocol,
                       csv_field(c.row.source), c.row.calibration, !c.row.excluded.empty());
  }
  return out;
}

}  // namespace gf::report
