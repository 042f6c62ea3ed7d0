#include "calib/nvbandwidth_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"

namespace gf::calib {

namespace {

// nvbandwidth numbers rows and columns by device; more than this is not a real output.
constexpr int kMaxDevices = 4096;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

bool whole(const std::string& s, int& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 0 && out < kMaxDevices;
}

bool figure(const std::string& s, double& out) {
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.')) return false;
  std::size_t used = 0;
  try {
    out = std::stod(s, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size() && std::isfinite(out) && out >= 0;
}

// "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", "... latency ... (ns)".
bool is_description(const std::string& line, const std::vector<std::string>& w) {
  int dummy = 0;
  return !w.empty() && !whole(w[0], dummy) &&
         (line.find("(GB/s)") != std::string::npos || line.find("(ns)") != std::string::npos);
}

}  // namespace

NvbandwidthOutput parse_nvbandwidth_output(const std::string& text, const std::string& file) {
  NvbandwidthOutput out;
  out.file = file;
  // nvbandwidth prints ASCII; every string read here may reach JSON output, which must be UTF-8.
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    throw InputError({file, static_cast<int>(line), 0}, "text", fmt::format("byte {} is not valid UTF-8", bad),
                     "nvbandwidth's text output, as printed");
  }
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(line);
    }
  }
  std::string running;           // the testcase the last "Running X." named
  std::size_t unnamed_from = 0;  // matrices from here on may still get a name from SUM
  auto fail = [&](std::size_t i, const std::string& field, const std::string& problem, const std::string& valid) {
    throw InputError({file, static_cast<int>(i + 1), 0}, field, problem, valid);
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const auto w = words(line);
    if (w.empty()) continue;
    if (w[0] == "Running" && w.size() == 2 && w[1].size() > 1 && w[1].back() == '.') {
      running = w[1].substr(0, w[1].size() - 1);
      unnamed_from = out.matrices.size();
      continue;
    }
    if (w[0] == "Waived:" || w[0] == "Waiving" || w[0] == "Waived") {
      out.notes.push_back(fmt::format(
          "{}: {}", i + 1,
          line.find_first_not_of(' ') == std::string::npos ? line : line.substr(line.find_first_not_of(' '))));
      continue;
    }
    if ((w[0] == "SUM" || (w[0] == "&&&&" && w.size() >= 3 && w[1] == "PERF")) && w.size() >= 3) {
      const std::string& name = w[0] == "SUM" ? w[1] : w[2];
      for (std::size_t m = unnamed_from; m < out.matrices.size(); ++m) {
        if (out.matrices[m].testcase.empty()) out.matrices[m].testcase = name;
      }
      unnamed_from = out.matrices.size();
      continue;
    }
    if (!is_description(line, w)) continue;
    NvbandwidthMatrix m;
    m.testcase = running;
    m.description = line.substr(line.find_first_not_of(' '));
    m.line = static_cast<int>(i + 1);
    // The column header: the next non-blank line, every word a device number.
    std::size_t h = i + 1;
    while (h < lines.size() && words(lines[h]).empty()) ++h;
    if (h >= lines.size()) {
      fail(i, "matrix", "the matrix under '" + m.description + "' is missing",
           "a header line of column numbers, then one line per row");
    }
    for (const auto& c : words(lines[h])) {
      int v = 0;
      if (!whole(c, v)) {
        fail(h, "columns", fmt::format("'{}' is not a column number", c),
             fmt::format("device numbers 0..{} separated by spaces, as nvbandwidth prints them", kMaxDevices - 1));
      }
      m.columns.push_back(v);
    }
    // Rows: a device number, then one cell per column; the matrix ends at a blank line or at a
    // line that does not start with a number (SUM, the next testcase).
    std::size_t r = h + 1;
    for (; r < lines.size(); ++r) {
      const auto rw = words(lines[r]);
      int label = 0;
      if (rw.empty() || !whole(rw[0], label)) break;
      if (rw.size() != m.columns.size() + 1) {
        fail(r, "row " + rw[0],
             fmt::format("{} cells where the header has {} columns", rw.size() - 1, m.columns.size()),
             fmt::format("{} cells, each a figure in GB/s or N/A", m.columns.size()));
      }
      NvbandwidthMatrix::Row row;
      row.label = label;
      row.line = static_cast<int>(r + 1);
      for (std::size_t c = 1; c < rw.size(); ++c) {
        double v = 0;
        if (rw[c] == "N/A") {
          row.cells.emplace_back();
        } else if (figure(rw[c], v)) {
          row.cells.emplace_back(v);
        } else {
          fail(r, fmt::format("row {} column {}", rw[0], m.columns[c - 1]),
               fmt::format("'{}' is not a bandwidth", rw[c]), "a figure of at least 0 (GB/s), or N/A");
        }
      }
      m.rows.push_back(std::move(row));
    }
    if (m.rows.empty()) {
      fail(h, "matrix", "the matrix under '" + m.description + "' has a header but no rows",
           "one line per row: its number, then a figure or N/A per column");
    }
    out.matrices.push_back(std::move(m));
    i = r - 1;
  }
  if (out.matrices.empty() && out.notes.empty()) {
    throw InputError({file, static_cast<int>(lines.size()), 0}, "matrix", "no nvbandwidth result matrix in the file",
                     "the text nvbandwidth prints (not its --json output), e.g. from "
                     "'nvbandwidth -t host_to_device_memcpy_ce'");
  }
  return out;
}

}  // namespace gf::calib
