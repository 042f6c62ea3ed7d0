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

// What a row says of its size: its element count and the bytes of its type, checked against the
// size once the collective is known (a header line or the file's name may come after the row).
struct RowShape {
  int line = 0;
  double size = 0;
  double count = 0;
  double type_bytes = 0;
  std::string type;
};

// The data type of a row (nccl-tests' names, src/common.cu's test_typenames, and the older
// "char" and "int"), else an InputError at the line.
double type_bytes(const std::string& type, const std::string& file, int line) {
  const auto t = comm::parse_dtype(type);
  if (!t) {
    throw InputError({file, line, 0}, "type", "unknown data type '" + type + "'",
                     join(comm::dtype_names()) + ", as nccl-tests prints them");
  }
  return t->bytes;
}

// nccl-tests prints size = max(send, receive bytes) and count = the count passed to NCCL
// (src/common.cu, setupArgs): count x sizeof(type) for all_reduce, broadcast, reduce and
// sendrecv; for all_gather, reduce_scatter and alltoall, whose count is per rank, that times the
// ranks, which are the same on every row. A row that breaks this was not printed by nccl-tests
// (or was edited), and its time would be fitted to the wrong size.
void check_shapes(const std::vector<RowShape>& rows, const std::string& file, comm::Op op) {
  const bool per_rank = comm::splits_by_rank(op);
  double ranks = 0;  // size / (count x sizeof(type)) of the first row with a count, for per_rank ops
  for (const auto& r : rows) {
    const double unit = r.count * r.type_bytes;
    const double n = unit > 0 ? r.size / unit : 0;
    bool ok = r.count == std::floor(r.count) && (r.count == 0 ? r.size == 0 : n >= 1 && n == std::floor(n));
    if (ok && r.count > 0) {
      if (!per_rank) ok = n == 1;
      if (per_rank && ranks == 0) ranks = n;
      if (per_rank) ok = n == ranks;
    }
    if (ok) continue;
    throw InputError(
        {file, r.line, 0}, "count",
        fmt::format(
            "size {:g} does not match count {:g} of {} ({:g} bytes each){}", r.size, r.count, r.type, r.type_bytes,
            per_rank && ranks > 0 ? fmt::format(" and the {:g} ranks of the rows above", ranks) : std::string()),
        per_rank
            ? fmt::format("size = count x bytes of the type x ranks ({}, as nccl-tests prints it)", comm::to_string(op))
            : fmt::format("size = count x bytes of the type ({}, as nccl-tests prints it)", comm::to_string(op)));
  }
}

}  // namespace

NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& file, const std::string& op) {
  NcclTestsLog log;
  log.file = file;
  log.op = op;
  std::istringstream in(text);
  int lineno = 0;
  std::vector<RowShape> shapes;
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
    shapes.push_back({lineno, size, count, type_bytes(w[2], file, lineno), w[2]});
    if (size == 0) continue;  // nccl-tests prints 0-byte rows for some ops
    log.rows.push_back({size, time, busbw, lineno});
  }
  if (log.op.empty()) log.op = op_from(file);
  if (log.op.empty()) {
    throw InputError({file, 0, 0}, "op", "cannot tell which collective this log measured",
                     "FILE:OP on the command line, e.g. run.log:all_reduce, or a log with its "
                     "'Collective test starting: all_reduce_perf' line");
  }
  const auto op_kind = comm::parse_op(log.op);
  if (!op_kind) {
    throw InputError({file, 0, 0}, "op", "unknown collective '" + log.op + "'", "all_reduce, all_gather, ...");
  }
  check_shapes(shapes, file, *op_kind);
  if (log.rows.empty()) {
    throw InputError({file, lineno, 0}, "rows", "no nccl-tests table rows in the file",
                     "the output of an nccl-tests binary such as all_reduce_perf");
  }
  return log;
}

}  // namespace gf::calib
