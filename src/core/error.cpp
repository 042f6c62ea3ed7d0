#include "core/error.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/printable.hpp"

namespace gf {

namespace {
std::string format_raw_message(const SourceLocation& where, const std::string& field, const std::string& problem,
                               const std::string& valid) {
  std::string msg;
  if (!where.file.empty()) {
    msg = where.file;
    if (where.line > 0) msg += fmt::format(":{}", where.line);
    if (where.line > 0 && where.column > 0) msg += fmt::format(":{}", where.column);
    msg += ": ";
  }
  if (!field.empty()) msg += fmt::format("field '{}': ", field);
  msg += problem;
  if (!valid.empty()) msg += fmt::format(" (valid: {})", valid);
  return msg;
}

// Every part may quote the user's input (a name, a line of a log), so the message is made printable
// here, once, for every reader: no raw ESC or invalid UTF-8 reaches the terminal or a JSON report.
std::string format_message(const SourceLocation& where, const std::string& field, const std::string& problem,
                           const std::string& valid) {
  return printable(format_raw_message(where, field, problem, valid), true);
}
}  // namespace

InputError::InputError(SourceLocation where, std::string field, std::string problem, std::string valid)
    : std::runtime_error(format_message(where, field, problem, valid)),
      where_(std::move(where)),
      field_(std::move(field)),
      problem_(std::move(problem)),
      valid_(std::move(valid)) {}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace gf
