#include "report/collective_report.hpp"

#include "core/csv.hpp"
#include "core/version.hpp"
#include "report/generalisation_report.hpp"
#include "report/table.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace gf::report {

double average_busbw_GBps(const std::vector<CollectiveRow>& rows) {
  if (rows.empty()) return 0.0;
  double sum = 0;
  for (const auto& r : rows) sum += r.result.busbw_GBps;
  return sum / static_cast<double>(rows.size());
}

Messages collective_messages(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows) {
  Messages m;
  for (const auto& line : h.notes) m.add(line);
  for (const auto& r : rows) {
    for (const auto& w : r.result.warnings) m.add_warning(w);
  }
  return m;
}

std::string collective_table(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows) {
  std::string out;
  out += fmt::format("# gpufabric collective {} (predicted; nccl-tests layout)\n", h.op);
  out += fmt::format("# cluster: {}\n# {}\n# engine: {}\n", h.cluster, h.communicator, h.engine);
  for (const auto& line : h.notes) out += "# " + line + "\n";
  if (!h.transports.empty()) {
    out += "# transports (as NCCL_DEBUG=INFO names them):\n";
    for (const auto& line : h.transports) out += "#   " + line + "\n";
  }
  out += "#\n";
  out += fmt::format("#{:>12} {:>12} {:>9} {:>7} {:>6} {:>10} {:>8} {:>8}  {:<13} {:<6} {:>4}  {:<17} {}\n", "size",
                     "count", "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "proto", "ch",
                     "time band", "warn");
  out += fmt::format("#{:>12} {:>12} {:>9} {:>7} {:>6} {:>10} {:>8} {:>8}  {:<13} {:<6} {:>4}  {}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "", "(rows)");
  std::vector<std::string> warnings;
  for (const auto& r : rows) {
    // The warning column: the footnotes that apply, and what the better choice would save.
    std::string marks;
    for (const auto& w : r.result.warnings) {
      auto it = std::find(warnings.begin(), warnings.end(), w);
      if (it == warnings.end()) it = warnings.insert(warnings.end(), w);
      marks += fmt::format("[{}]", it - warnings.begin() + 1);
    }
    if (r.result.better) marks += fmt::format(" {:.0f}%", -100.0 * r.result.better->saving);
    std::string line = fmt::format(
        " {:>12} {:>12} {:>9} {:>7} {:>6} {:>10.2f} {:>8.2f} {:>8.2f}  {:<13} {:<6} {:>4}  {:<17} {}",
        static_cast<long long>(r.size_bytes), r.count, r.type, r.redop, r.root, r.result.time.value() * 1e6,
        r.result.algbw_GBps, r.result.busbw_GBps, comm::to_string(r.result.algo), comm::to_string(r.result.proto),
        r.result.channels, band::describe_short(r.band, band::Direction::same), marks);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += fmt::format("# Out of bounds values : 0 OK\n");
  out += fmt::format("# Avg bus bandwidth    : {:.4f} \n", average_busbw_GBps(rows));
  // nccl-tests keeps microseconds in the table; the largest size's time in a unit people read.
  if (!rows.empty()) {
    out += fmt::format("# Largest size ({} B) : {}\n", static_cast<long long>(rows.back().size_bytes),
                       human_duration(rows.back().result.time.value()));
  }
  // The class is the size band and where the data runs ("<=64KiB multi-node infiniband").
  const std::string cls = rows.empty() ? std::string() : rows.front().band.cls;
  const std::string where = cls.substr(cls.find(' ') + 1);
  out += fmt::format(
      "# time band: the {:.0f}% interval of measured / predicted time a new cluster would show, from held-out\n"
      "#   public runs of the same class (size band, {}), and the rows behind it; `gpufabric validate\n"
      "#   --suite collectives` lists them. unvalidated: fewer than {} such rows or {} sources, no interval claimed.\n",
      100 * band::kCoverage, where, band::kMinRows, band::kMinSources);
  out += "#\n";
  for (std::size_t i = 0; i < warnings.size(); ++i) out += fmt::format("# warning [{}]: {}\n", i + 1, warnings[i]);
  return out;
}

std::string collective_json(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : rows) {
    arr.push_back({{"size_bytes", static_cast<long long>(r.size_bytes)},
                   {"count", r.count},
                   {"type", r.type},
                   {"redop", r.redop},
                   {"root", r.root},
                   {"time_us", r.result.time.value() * 1e6},
                   {"latency_us", r.result.latency.value() * 1e6},
                   {"data_time_us", r.result.data_time.value() * 1e6},
                   {"fill_us", r.result.fill.value() * 1e6},
                   {"algbw_GBps", r.result.algbw_GBps},
                   {"busbw_GBps", r.result.busbw_GBps},
                   {"algorithm", comm::to_string(r.result.algo)},
                   {"protocol", comm::to_string(r.result.proto)},
                   {"channels", r.result.channels},
                   {"engine", comm::to_string(r.result.engine)},
                   {"warnings", r.result.warnings},
                   {"time_band_us", band_json(r.band, r.result.time.value() * 1e6, band::Direction::same)}});
    if (r.result.better) {
      arr.back()["better_choice"] = {{"algorithm", comm::to_string(r.result.better->algo)},
                                     {"protocol", comm::to_string(r.result.better->proto)},
                                     {"time_us", r.result.better->time.value() * 1e6},
                                     {"saving", r.result.better->saving}};
    }
  }
  const Messages m = collective_messages(h, rows);
  return nlohmann::json{{"gpufabric_version", kGpufabricVersion},
                        {"op", h.op},
                        {"cluster", h.cluster},
                        {"communicator", h.communicator},
                        {"comm", h.comm},
                        {"engine", h.engine},
                        {"warnings", m.warnings},
                        {"notes", m.notes},
                        {"transports", h.transports},
                        {"rows", arr},
                        {"avg_busbw_GBps", average_busbw_GBps(rows)}}
             .dump(2) +
         "\n";
}

std::string collective_csv(const CollectiveHeader& h, const std::vector<CollectiveRow>& rows) {
  std::string out = csv_comment_lines(collective_messages(h, rows));
  out += "size_bytes,count,type,redop,root,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels,engine\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{},{},{:.3f},{:.4f},{:.4f},{},{},{},{}\n", static_cast<long long>(r.size_bytes),
                       r.count, r.type, r.redop, r.root, r.result.time.value() * 1e6, r.result.algbw_GBps,
                       r.result.busbw_GBps, comm::to_string(r.result.algo), comm::to_string(r.result.proto),
                       r.result.channels, comm::to_string(r.result.engine));
  }
  return out;
}

}  // namespace gf::report
