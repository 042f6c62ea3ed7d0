#include "calib/nccl_tests_log.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "comm/collective.hpp"
#include "core/error.hpp"

namespace gf::calib {

namespace {

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool number(const std::string& s, double& out) {
  if (s.empty()) return false;
  std::size_t used = 0;
  try {
    out = std::stod(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size() && std::isfinite(out);
}

// "all_reduce_perf" (or a path or file name containing it) -> "all_reduce".
std::string op_from(const std::string& text) {
  for (const auto& name : comm::op_names()) {
    if (text.find(name + "_perf") != std::string::npos) return name;
  }
  return {};
}

}  // namespace

NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file, const std::string& op) {
  NcclTestsLog log;
  log.file = file;
  log.op = op;
  std::istringstream in(text);
  int lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto w = words(line);
    if (w.empty()) continue;
    if (w.front().starts_with("#")) {
      if (log.op.empty()) log.op = op_from(line);
      for (std::size_t i = 0; i + 1 < w.size(); ++i) {
        double v = 0;
        if (w[i] == "nGpus" && number(w[i + 1], v) && v >= 1 && v <= 72) log.gpus_per_process = static_cast<int>(v);
        if (w[i] == "graph:" && number(w[i + 1], v)) log.cuda_graph = v > 0;
      }
      continue;
    }
    // size count type redop root time algbw busbw #wrong (out-of-place), then in-place.
    double size = 0, count = 0, time = 0, busbw = 0;
    if (w.size() < 8 || !number(w[0], size) || !number(w[1], count)) continue;
    if (!number(w[5], time) || !number(w[7], busbw) || size < 0 || time <= 0) {
      throw InputError(
          {file, lineno, 0}, "row",
          fmt::format("'{}' is not an nccl-tests row (size count type redop root time algbw busbw ...)", line),
          "the table as nccl-tests prints it");
    }
    if (size == 0) continue;  // nccl-tests prints 0-byte rows for some ops
    log.rows.push_back({size, time, busbw, lineno});
  }
  if (log.op.empty()) log.op = op_from(file);
  if (log.op.empty()) {
    throw InputError({file, 0, 0}, "op", "cannot tell which collective this log measured",
                     "FILE:OP on the command line, e.g. run.log:all_reduce, or a log with its "
                     "'Collective test starting: all_reduce_perf' line");
  }
  if (!comm::parse_op(log.op)) {
    throw InputError({file, 0, 0}, "op", "unknown collective '" + log.op + "'", "all_reduce, all_gather, ...");
  }
  if (log.rows.empty()) {
    throw InputError({file, lineno, 0}, "rows", "no nccl-tests table rows in the file",
                     "the output of an nccl-tests binary such as all_reduce_perf");
  }
  return log;
}

}  // namespace gf::calib
