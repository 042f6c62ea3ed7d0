#include "sched/trace_reader.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gf::sched {

namespace {

// One row's fields by column name, with checked conversions that throw InputError at the row's
// line.
class RowReader {
public:
  RowReader(const CsvTable& t, const CsvRow& r) : t_(t), r_(r) {
    if (r.fields.size() != t.header.size())
      throw InputError({t.file, r.line, 0}, "row",
                       fmt::format("{} fields where the header has {}", r.fields.size(), t.header.size()),
                       join(t.header, ","));
  }
  [[nodiscard]] bool has(const std::string& c) const {
    const int i = t_.column(c);
    return i >= 0 && !r_.fields[static_cast<std::size_t>(i)].empty();
  }
  [[nodiscard]] std::string text(const std::string& c) const {
    const int i = t_.column(c);
    return i < 0 ? std::string() : r_.fields[static_cast<std::size_t>(i)];
  }
  [[nodiscard]] double number(const std::string& c, double min, double max, const char* valid) const {
    const std::string s = text(c);
    if (s.empty()) fail(c, "is empty", valid);
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
      fail(c, fmt::format("'{}' is not a number", s), valid);
    if (v < min || v > max) fail(c, fmt::format("{} is out of range", s), valid);
    return v;
  }
  [[nodiscard]] long whole(const std::string& c, long min, long max, const char* valid) const {
    const std::string s = text(c);
    if (s.empty()) fail(c, "is empty", valid);
    long v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) fail(c, fmt::format("'{}' is not a whole number", s), valid);
    if (v < min || v > max) fail(c, fmt::format("{} is out of range", s), valid);
    return v;
  }
  [[noreturn]] void fail(const std::string& c, const std::string& problem, const std::string& valid) const {
    throw InputError({t_.file, r_.line, 0}, c, problem, valid);
  }

private:
  const CsvTable& t_;
  const CsvRow& r_;
};

std::vector<std::string> split_bar(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = std::min(s.find('|', b), s.size());
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

void require(const CsvTable& t, const std::vector<std::string>& cols, const std::string& format) {
  for (const auto& c : cols)
    if (t.column(c) < 0)
      throw InputError({t.file, 1, 0}, c, fmt::format("the header has no '{}' column ({} format)", c, format),
                       join(cols, ","));
}

constexpr double kMaxTime = kMaxTraceSeconds;
constexpr long kMaxCpu = kMaxCpuMilli;
constexpr long kMaxMemory = kMaxMemoryMib;

Job pai_pod(const RowReader& r, bool timed) {
  Job j;
  j.name = r.text("name");
  if (j.name.empty()) r.fail("name", "is empty", "the pod's name");
  j.pod.cpu_milli = r.whole("cpu_milli", 0, kMaxCpu, "thousandths of a CPU, 0 or more");
  j.pod.memory_mib = r.whole("memory_mib", 0, kMaxMemory, "MiB, 0 or more");
  const long gpus = r.whole("num_gpu", 0, 64, "whole GPUs, 0 to 64");
  const long milli = r.has("gpu_milli") ? r.whole("gpu_milli", 0, 1000, "thousandths of a GPU, 0 to 1000") : 0;
  if (gpus == 1 && milli > 0 && milli < 1000) {
    j.pod.share_milli = static_cast<int>(milli);
  } else if (gpus > 1 && milli != 1000 && milli != 0) {
    r.fail("gpu_milli", fmt::format("{} GPUs with a share of {} each", gpus, milli),
           "1000 (whole GPUs) when num_gpu is more than 1; a share below 1000 only with num_gpu 1");
  } else if (gpus >= 1) {
    j.pod.gpus = static_cast<int>(gpus);
  }
  j.pod.gpu_models = split_bar(r.text("gpu_spec"));
  j.qos = r.text("qos");
  if (!timed) return j;
  j.submit = r.number("creation_time", 0, kMaxTime, "seconds from the trace start");
  const double deleted = r.number("deletion_time", 0, kMaxTime, "seconds from the trace start");
  if (deleted < j.submit)
    r.fail("deletion_time", fmt::format("{} is before creation_time {}", deleted, j.submit),
           "a time at or after creation_time");
  if (r.has("scheduled_time")) {
    const double start = r.number("scheduled_time", 0, kMaxTime, "seconds from the trace start");
    if (start < j.submit || start > deleted)
      r.fail("scheduled_time", fmt::format("{} is outside creation {} .. deletion {}", start, j.submit, deleted),
             "a time from creation_time to deletion_time");
    j.duration = deleted - start;
    j.recorded_queue = start - j.submit;
  } else {
    // Never scheduled in the trace: the pod was deleted while it waited. Replayed, it waits
    // until then; if a policy starts it sooner it runs until then.
    j.deadline = deleted;
    j.duration = deleted - j.submit;
  }
  return j;
}

Job generic_job(const RowReader& r) {
  Job j;
  j.name = r.text("name");
  if (j.name.empty()) r.fail("name", "is empty", "the job's name");
  j.submit = r.number("submit", 0, kMaxTime, "seconds from the trace start, 0 or more");
  j.pods = static_cast<int>(r.has("pods") ? r.whole("pods", 1, 4096, "pods started together, 1 to 4096") : 1);
  j.pod.gpus = static_cast<int>(r.has("gpus") ? r.whole("gpus", 0, 64, "whole GPUs per pod, 0 to 64") : 0);
  if (r.has("gpu_milli")) {
    const long milli = r.whole("gpu_milli", 1, 999, "a share of one GPU in thousandths, 1 to 999");
    if (j.pod.gpus > 0) r.fail("gpu_milli", "given with whole GPUs", "either gpus (whole) or gpu_milli (a share)");
    j.pod.share_milli = static_cast<int>(milli);
  }
  j.pod.mig = r.text("mig");
  if (!j.pod.mig.empty() && (j.pod.gpus > 0 || j.pod.share_milli > 0))
    r.fail("mig", "given with gpus or gpu_milli", "one of gpus, gpu_milli or mig");
  if (!j.pod.mig.empty() && mig_milli(j.pod.mig) <= 0)
    r.fail("mig", fmt::format("'{}' is not a MIG profile name", j.pod.mig), "a profile such as 1g.10gb or 3g.40gb");
  j.pod.cpu_milli = r.has("cpu_milli") ? r.whole("cpu_milli", 0, kMaxCpu, "thousandths of a CPU, 0 or more") : 0;
  j.pod.memory_mib = r.has("memory_mib") ? r.whole("memory_mib", 0, kMaxMemory, "MiB, 0 or more") : 0;
  j.pod.gpu_models = split_bar(r.text("gpu_models"));
  j.qos = r.text("qos");
  if (r.has("model")) {
    TrainingWork w;
    w.model = r.text("model");
    w.steps = r.whole("steps", 1, 1'000'000'000, "training steps, 1 or more");
    w.tp = r.has("tp") ? r.whole("tp", 1, 64, "tensor-parallel size, 1 to 64") : 1;
    w.pp = r.has("pp") ? r.whole("pp", 1, 512, "pipeline stages, 1 to 512") : 1;
    w.micro_batch = r.has("micro_batch") ? r.whole("micro_batch", 1, 65536, "sequences, 1 or more") : 1;
    w.global_batch = r.has("global_batch") ? r.whole("global_batch", 1, 1L << 30, "sequences, 1 or more") : 0;
    if (j.pod.gpus < 1) r.fail("gpus", "a training workload without whole GPUs", "gpus: whole GPUs per pod, 1 or more");
    if (r.has("duration")) r.fail("duration", "given with a model", "either duration, or model and steps");
    j.training = w;
  } else {
    j.duration = r.number("duration", 0, kMaxTime, "seconds, or give model and steps instead");
  }
  if (r.has("deadline")) {
    j.deadline = r.number("deadline", 0, kMaxTime, "seconds from the trace start: when the job gives up");
    if (j.deadline < j.submit) r.fail("deadline", "is before submit", "a time at or after submit");
  }
  return j;
}

}  // namespace

Trace parse_trace(const CsvTable& t, bool skip_bad) {
  Trace out;
  out.file = t.file;
  const bool pai = t.column("num_gpu") >= 0;
  std::function<Job(const RowReader&)> read;
  if (pai) {
    out.format = "alibaba-pai-2023";
    require(t, {"name", "cpu_milli", "memory_mib", "num_gpu"}, out.format);
    out.timed = t.column("creation_time") >= 0;
    if (out.timed) require(t, {"creation_time", "deletion_time"}, out.format);
    read = [&](const RowReader& r) { return pai_pod(r, out.timed); };
  } else {
    out.format = "gpufabric";
    require(t, {"name", "submit"}, out.format);
    if (t.column("duration") < 0 && t.column("model") < 0)
      throw InputError({t.file, 1, 0}, "duration", "the header has neither 'duration' nor 'model'",
                       "name,submit,duration,gpus,... (or model and steps in place of duration)");
    read = generic_job;
  }
  std::set<std::string> names;
  for (const auto& row : t.rows) {
    try {
      RowReader r(t, row);
      Job j = read(r);
      j.line = row.line;
      if (!names.insert(j.name).second) r.fail("name", fmt::format("'{}' appears twice", j.name), "unique names");
      out.jobs.push_back(std::move(j));
    } catch (const InputError& e) {
      if (!skip_bad) throw;
      out.skipped.push_back(fmt::format("{}:{}: {}: {}", e.where().file, e.where().line, e.field(), e.problem()));
    }
  }
  if (out.jobs.empty())
    throw InputError({t.file, 0, 0}, "rows", skip_bad ? "no row could be read" : "the trace has no jobs",
                     "one job per line under the header");
  return out;
}

Trace read_trace(const std::string& path, bool skip_bad) { return parse_trace(read_csv(path), skip_bad); }

std::vector<Node> parse_nodes(const CsvTable& t, bool skip_bad, std::vector<std::string>& skipped) {
  require(t, {"sn", "cpu_milli", "memory_mib", "gpu", "model"}, "node list");
  std::vector<Node> out;
  std::set<std::string> names;
  for (const auto& row : t.rows) {
    try {
      RowReader r(t, row);
      Node n;
      n.name = r.text("sn");
      if (n.name.empty()) r.fail("sn", "is empty", "the node's name");
      if (!names.insert(n.name).second) r.fail("sn", fmt::format("'{}' appears twice", n.name), "unique names");
      n.cpu_milli = r.whole("cpu_milli", 0, kMaxCpu, "thousandths of a CPU");
      n.memory_mib = r.whole("memory_mib", 0, kMaxMemory, "MiB");
      const long gpus = r.whole("gpu", 0, 64, "GPUs in the node, 0 to 64");
      n.model = r.text("model");
      if (gpus > 0 && n.model.empty()) r.fail("model", "is empty for a node with GPUs", "the GPU model's name");
      n.gpus.resize(static_cast<std::size_t>(gpus));
      n.leaf = r.has("leaf") ? r.whole("leaf", 0, 1'000'000, "the leaf switch's index, 0 or more") : -1;
      n.mig_table = mig_table(n.model);
      out.push_back(std::move(n));
    } catch (const InputError& e) {
      if (!skip_bad) throw;
      skipped.push_back(fmt::format("{}:{}: {}: {}", e.where().file, e.where().line, e.field(), e.problem()));
    }
  }
  if (out.empty()) throw InputError({t.file, 0, 0}, "rows", "the node list has no nodes", "one node per line");
  // Leaf switches: all or none, so that topology-aware placement means the same thing throughout.
  const bool any_leaf = std::any_of(out.begin(), out.end(), [](const Node& n) { return n.leaf >= 0; });
  if (any_leaf)
    for (const auto& n : out)
      if (n.leaf < 0)
        throw InputError({t.file, 0, 0}, "leaf", fmt::format("node {} has no leaf while others do", n.name),
                         "a leaf for every node, or for none");
  if (!any_leaf)
    for (auto& n : out) n.leaf = 0;  // unknown: one switch, as far as placement can tell
  return out;
}

std::vector<Node> read_nodes(const std::string& path, bool skip_bad, std::vector<std::string>& skipped) {
  return parse_nodes(read_csv(path), skip_bad, skipped);
}

}  // namespace gf::sched
