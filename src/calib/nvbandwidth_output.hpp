#pragma once
// NVIDIA nvbandwidth's plain-text output (github.com/NVIDIA/nvbandwidth, output.cpp and
// inline_common.h): per testcase a "Running NAME." line, a description such as
// "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", a matrix whose first line numbers the
// columns and whose rows start with their own number (a cell is a figure or N/A), a blank line
// and "SUM NAME TOTAL". Bidirectional device-to-device testcases print several matrices.
#include <optional>
#include <string>
#include <vector>

namespace gf::calib {

struct NvbandwidthMatrix {
  std::string testcase;     // host_to_device_memcpy_ce, ... (from "Running X." or the SUM line)
  std::string description;  // the line above the matrix
  int line = 0;             // the description's line
  std::vector<int> columns;
  struct Row {
    int label = 0;
    int line = 0;
    std::vector<std::optional<double>> cells;  // GB/s (or ns for latency testcases); nullopt = N/A
  };
  std::vector<Row> rows;
};

struct NvbandwidthOutput {
  std::string file;
  std::vector<NvbandwidthMatrix> matrices;
  std::vector<std::string> notes;  // waived testcases, matrices without a name
};

// Parses nvbandwidth's text output. A matrix that is cut short, has a row whose cell count
// differs from its header, or a cell that is neither a figure nor N/A is an InputError naming
// file:line; a file with neither a matrix nor a waived testcase is one too.
NvbandwidthOutput parse_nvbandwidth_output(const std::string& text, const std::string& file);

}  // namespace gf::calib
