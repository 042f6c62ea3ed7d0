#include "sched/import/sacct_trace.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sched/csv_table.hpp"
#include "sched/import/iso_time.hpp"
#include "sched/import/slurm_tres.hpp"
#include "sched/import/trace_writer.hpp"
#include "sched/trace_reader.hpp"

namespace gf::sched {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A row's fields by sacct column name (sacct takes --format names in any case and order).
class SacctRow {
public:
  SacctRow(const CsvTable& t, const CsvRow& r, const std::map<std::string, int>& columns)
      : t_(t), r_(r), columns_(columns) {}
  [[nodiscard]] bool has_column(const std::string& c) const { return columns_.count(lower(c)) > 0; }
  [[nodiscard]] std::string text(const std::string& c) const {
    const auto it = columns_.find(lower(c));
    return it == columns_.end() ? std::string() : r_.fields[static_cast<std::size_t>(it->second)];
  }
  [[nodiscard]] SourceLocation where() const { return {t_.file, r_.line, 0}; }
  [[noreturn]] void fail(const std::string& c, const std::string& problem, const std::string& valid) const {
    throw InputError(where(), c, problem, valid);
  }
  // A time stamp; nullopt for the values sacct prints when there is none.
  [[nodiscard]] std::optional<double> time(const std::string& c) const {
    const std::string s = text(c);
    if (s.empty() || s == "Unknown" || s == "None" || s == "N/A") return std::nullopt;
    const auto t = iso_seconds(s);
    if (!t) fail(c, fmt::format("'{}' is not a time", s), "YYYY-MM-DDThh:mm:ss, Unknown or None");
    return t;
  }

private:
  const CsvTable& t_;
  const CsvRow& r_;
  const std::map<std::string, int>& columns_;
};

// "[D-]HH:MM:SS" (also "MM:SS", as sacct prints short limits) in seconds, or nullopt.
std::optional<double> elapsed_seconds(const std::string& s) {
  long days = 0;
  std::string rest = s;
  if (const auto dash = s.find('-'); dash != std::string::npos) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + dash, days);
    if (dash == 0 || ec != std::errc() || p != s.data() + dash || days < 0 || days > 1'000'000) return std::nullopt;
    rest = s.substr(dash + 1);
  }
  long parts[3] = {0, 0, 0};
  int n = 0;
  std::size_t b = 0;
  while (b <= rest.size()) {
    const std::size_t e = std::min(rest.find(':', b), rest.size());
    if (n == 3 || e == b) return std::nullopt;
    const auto [p, ec] = std::from_chars(rest.data() + b, rest.data() + e, parts[n]);
    if (ec != std::errc() || p != rest.data() + e || parts[n] < 0 || parts[n] > 1'000'000) return std::nullopt;
    ++n;
    b = e + 1;
  }
  if (n < 2 || (n == 3 && (parts[1] > 59 || parts[2] > 59)) || (n == 2 && parts[1] > 59)) return std::nullopt;
  const long h = n == 3 ? parts[0] : 0, m = n == 3 ? parts[1] : parts[0], sec = n == 3 ? parts[2] : parts[1];
  return static_cast<double>(((days * 24 + h) * 60 + m) * 60 + sec);
}

std::map<std::string, int> column_map(const CsvTable& t) {
  std::map<std::string, int> out;
  for (std::size_t i = 0; i < t.header.size(); ++i) out.emplace(lower(t.header[i]), static_cast<int>(i));
  return out;
}

void require_columns(const CsvTable& t, const std::map<std::string, int>& columns) {
  const std::string valid = std::string("a header line naming the columns; print it with: ") + kSacctCommand;
  if (!t.header.empty() && !t.header.front().empty() && std::isdigit(static_cast<unsigned char>(t.header.front()[0])))
    throw InputError(
        {t.file, 1, 0}, "header",
        fmt::format("the first line starts with '{}', a job, not a header (sacct --noheader?)", t.header.front()),
        valid);
  const auto any = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return columns.count(lower(n)) > 0; });
  };
  for (const char* c : {"JobID", "Submit", "Start", "State"})
    if (!any({c})) throw InputError({t.file, 1, 0}, c, fmt::format("the header has no {} column", c), valid);
  if (!any({"AllocTRES", "ReqTRES", "AllocGRES", "ReqGRES"}))
    throw InputError({t.file, 1, 0}, "AllocTRES", "the header has none of AllocTRES, ReqTRES, AllocGRES, ReqGRES",
                     valid);
  if (!any({"Elapsed", "ElapsedRaw", "End"}))
    throw InputError({t.file, 1, 0}, "Elapsed", "the header has none of Elapsed, ElapsedRaw, End", valid);
}

// The job's GPUs, CPUs and memory: what it was allocated, else what it asked for.
SlurmResources resources(const SacctRow& r) {
  for (const char* c : {"AllocTRES", "ReqTRES"}) {
    const std::string s = r.text(c);
    if (!s.empty()) {
      const auto res = parse_tres(s, r.where(), c);
      if (res.gpus > 0 || c == std::string("ReqTRES")) return res;
    }
  }
  for (const char* c : {"AllocGRES", "ReqGRES"}) {
    const std::string s = r.text(c);
    if (!s.empty()) return parse_gres(s, r.where(), c);
  }
  return {};
}

std::optional<double> duration(const SacctRow& r, double start) {
  if (const std::string e = r.text("Elapsed"); !e.empty()) {
    const auto d = elapsed_seconds(e);
    if (!d) r.fail("Elapsed", fmt::format("'{}' is not a duration", e), "[D-]HH:MM:SS, e.g. 1-02:03:04");
    return d;
  }
  if (const std::string e = r.text("ElapsedRaw"); !e.empty()) {
    long v = 0;
    const auto [p, ec] = std::from_chars(e.data(), e.data() + e.size(), v);
    if (ec != std::errc() || p != e.data() + e.size() || v < 0 || v > 100'000'000'000L)
      r.fail("ElapsedRaw", fmt::format("'{}' is not a number of seconds", e), "whole seconds, 0 or more");
    return static_cast<double>(v);
  }
  const auto end = r.time("End");
  if (!end) return std::nullopt;
  if (*end < start) r.fail("End", "is before Start", "a time at or after Start");
  return *end - start;
}

// Reads one allocation row, or counts in `report` why it is left out; `uneven` counts jobs whose
// GPUs do not divide over their nodes (each node is given the rounded-up share).
std::optional<Job> read_job(const SacctRow& r, ImportReport& report, long& uneven) {
  const std::string id = r.text("JobID");
  if (id.empty()) r.fail("JobID", "is empty", "the job's ID, e.g. 1234 or 1234_5");
  if (id.find('.') != std::string::npos) {
    report.skip("job steps (folded into their job)");
    return std::nullopt;
  }
  ++report.records;
  const std::string state_text = r.text("State");
  const std::string state = state_text.substr(0, state_text.find(' '));  // "CANCELLED by 123"
  const auto submit = r.time("Submit");
  if (!submit) r.fail("Submit", "is missing", "the time the job was submitted, YYYY-MM-DDThh:mm:ss");
  const auto start = r.time("Start");
  const SlurmResources res = resources(r);
  if (res.gpus <= 0) {
    report.skip("jobs without GPUs");
    return std::nullopt;
  }
  if (state == "PENDING" || !start) {
    report.skip("GPU jobs that never started (PENDING, or cancelled while pending)");
    return std::nullopt;
  }
  static const char* const kRunning[] = {"RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "RESIZING", "REQUEUED"};
  if (std::find(std::begin(kRunning), std::end(kRunning), state) != std::end(kRunning)) {
    report.skip("GPU jobs still running (no duration yet)");
    return std::nullopt;
  }
  const auto d = duration(r, *start);
  if (!d) {
    report.skip("GPU jobs with no end time");
    return std::nullopt;
  }
  long nodes = 1;
  if (const std::string n = r.text("NNodes"); !n.empty()) {
    const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), nodes);
    if (ec != std::errc() || p != n.data() + n.size() || nodes < 0 || nodes > 4096)
      r.fail("NNodes", fmt::format("'{}' is not a node count", n), "nodes, 1 to 4096");
    nodes = std::max(nodes, 1L);
  }
  const long per_node = (res.gpus + nodes - 1) / nodes;
  if (per_node > kMaxGpusPerPod) {
    report.skip(fmt::format("GPU jobs with more than {} GPUs per node", kMaxGpusPerPod));
    return std::nullopt;
  }
  if (per_node * nodes != res.gpus) ++uneven;
  Job j;
  j.name = id;
  j.line = 0;
  j.submit = *submit;
  j.duration = *d;
  j.recorded_queue = std::max(0.0, *start - *submit);
  j.pods = static_cast<int>(nodes);
  j.pod.gpus = static_cast<int>(per_node);
  j.pod.cpu_milli = res.cpus * 1000 / nodes;
  j.pod.memory_mib = res.memory_mib / nodes;
  if (j.pod.cpu_milli > kMaxCpuMilli || j.pod.memory_mib > kMaxMemoryMib)
    r.fail(r.text("AllocTRES").empty() ? "ReqTRES" : "AllocTRES",
           fmt::format("{} CPUs and {} MiB per node", j.pod.cpu_milli / 1000, j.pod.memory_mib),
           fmt::format("at most {} CPUs and {} MiB per node", kMaxCpuMilli / 1000, kMaxMemoryMib));
  j.qos = r.text("QOS");
  return j;
}

}  // namespace

ImportedTrace import_sacct(const std::string& text, const std::string& file) {
  const CsvTable t = parse_csv(text, file, CsvDialect{'|', false});
  const auto columns = column_map(t);
  require_columns(t, columns);
  ImportedTrace out;
  std::map<std::string, int> seen;
  std::set<std::string> names, ids;  // names given so far; every job ID in the file
  const int id_column = columns.at("jobid");
  for (const auto& row : t.rows)
    if (static_cast<std::size_t>(id_column) < row.fields.size())
      ids.insert(row.fields[static_cast<std::size_t>(id_column)]);
  long uneven = 0, repeated = 0;
  std::vector<std::pair<Job, std::string>> jobs;  // with the Submit text, for the report's origin
  for (const auto& row : t.rows) {
    if (row.fields.size() != t.header.size())
      throw InputError({t.file, row.line, 0}, "row",
                       fmt::format("{} fields where the header has {}", row.fields.size(), t.header.size()),
                       "one value per header column, separated by '|' (sacct --parsable2)");
    const SacctRow r(t, row, columns);
    auto j = read_job(r, out.report, uneven);
    if (!j) continue;
    j->line = row.line;
    // sacct -D lists a requeued job once per run, under one ID: a later run is named ID#2, ID#3,
    // skipping names the file itself has.
    if (!names.insert(j->name).second) {
      const std::string id = j->name;
      do j->name = fmt::format("{}#{}", id, ++seen[id] + 1);
      while (ids.count(j->name) > 0 || !names.insert(j->name).second);
      ++repeated;
    }
    jobs.emplace_back(std::move(*j), r.text("Submit"));
  }
  if (uneven > 0)
    out.report.warnings.push_back(fmt::format(
        "{} jobs' GPUs do not divide evenly over their nodes: each node's pod asks for the rounded-up share", uneven));
  if (repeated > 0)
    out.report.warnings.push_back(fmt::format(
        "{} job IDs appear more than once (requeued runs, sacct -D): later runs are named ID#2, ID#3", repeated));
  finish_trace(
      std::move(jobs), file,
      {"GPU job that ran",
       std::string("jobs with gres/gpu in AllocTRES that started and ended; print them with: ") + kSacctCommand,
       "Submit", "Elapsed"},
      out);
  return out;
}

}  // namespace gf::sched
