#pragma once
// Validation of point-to-point path predictions (GPU<->GPU, host<->GPU copies) against public
// measurements in data/validation/topo_paths.yaml. Each row names the preset closest to the
// measured machine; the prediction is the route's achievable bandwidth.
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "validate/machine.hpp"

namespace gf::validate {

struct PathRow {
  std::string id;
  std::string preset;   // the preset closest to the measured machine, or
  std::string cluster;  // a cluster file in data/validation/clusters/ describing it
  std::string path;     // gpu-gpu | h2d | d2h
  bool p2p = true;
  int src = 0;
  int dst = 1;
  bool remote_socket = false;
  double measured_GBps = 0;
  std::string tool;
  std::string machine;
  bool calibration = false;  // the catalog's efficiency for this link was set from this row
  std::string source;
  std::string note;
  RowOrigin origin;  // file, line and keys, for errors found when predicting
};

struct PathResult {
  PathRow row;
  std::string route_type;  // NV18, PIX, ...
  std::string transport;
  double predicted_GBps = 0;
  double error = 0;  // (predicted - measured) / measured
};

struct GroupError {
  std::string group;
  std::size_t rows = 0;
  double mape = 0;  // mean absolute percentage error, as a fraction
};

std::vector<PathRow> parse_path_rows(const std::string& text, const std::string& file);
// The rows built into the binary.
std::vector<PathRow> builtin_path_rows();
std::vector<PathResult> predict(const std::vector<PathRow>& rows, const hw::Catalog& catalog);
// MAPE per path type, split into calibration and independent rows, plus "all independent".
std::vector<GroupError> group_errors(const std::vector<PathResult>& results);

}  // namespace gf::validate
