#pragma once
// Calibration from a user's own measurements: least squares over a few physically meaningful
// parameters (the fraction of NVLink and network line rate NCCL reaches, what an SHM channel
// or a TCP stream moves, a fixed per-call overhead), so that the model reproduces the
// nccl-tests logs the user already has for their cluster. The result is an overlay that every
// command takes with --calibration.
#include <string>
#include <vector>

#include "calib/nccl_tests_log.hpp"
#include "comm/communicator.hpp"
#include "comm/nccl_params.hpp"

namespace gf::calib {

struct FittedParameter {
  std::string name;     // the overlay's key: nvlink_efficiency, network_efficiency, ...
  std::string meaning;  // one line for people
  double catalog = 0;   // the value before
  double fitted = 0;
};

struct FileFit {
  std::string file;
  std::string op;
  std::size_t rows = 0;
  double mape_catalog = 0;  // time error with the catalog's parameters
  double mape_fitted = 0;
};

struct Calibration {
  std::string cluster;
  long nodes = 0;
  long ranks = 0;
  int nvlink_generation = 0;
  std::string network;
  std::vector<FittedParameter> parameters;
  std::vector<FileFit> files;
  comm::NcclParams fitted;
};

// Fits the parameters the logs constrain on this topology (ranks spread as the Communicator
// spreads them, under `env`), starting from `base`.
Calibration calibrate(const topo::Topology& t, long ranks, const comm::NcclConfig& env,
                      const std::vector<NcclTestsLog>& logs, const comm::NcclParams& base);

// The overlay as YAML (documented in docs/calibration-format.md).
std::string calibration_yaml(const Calibration& c);

// Reads an overlay and applies it to `base`; a malformed file is an InputError at its line.
comm::NcclParams apply_calibration(const std::string& text, const std::string& file, const comm::NcclParams& base);

}  // namespace gf::calib
