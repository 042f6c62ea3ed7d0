#pragma once
// Calibration from a user's own measurements: least squares over a few physically meaningful
// parameters (the fraction of NVLink and network line rate NCCL reaches, what an SHM channel
// or a TCP stream moves, a fixed per-call overhead; the fraction of PCIe and NVLink line rate a
// copy engine reaches, and what host-staged and pageable copies reach), so that the model
// reproduces the nccl-tests logs, nvbandwidth outputs and probe profiles the user already has
// for their cluster. The result is an overlay that every command takes with --calibration.
#include <optional>
#include <string>
#include <vector>

#include "calib/copy_measurements.hpp"
#include "calib/nccl_tests_log.hpp"
#include "comm/communicator.hpp"
#include "comm/nccl_params.hpp"
#include "hw/catalog.hpp"

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
  int pcie_generation = 0;  // the PCIe generation pcie_copy_efficiency was fitted on (0: none)
  std::string network;
  std::vector<FittedParameter> parameters;
  std::vector<FileFit> files;
  std::vector<std::string> notes;  // inputs skipped, and why
  comm::NcclParams fitted;
};

// Fits the parameters the measurements constrain on this cluster (ranks spread as the
// Communicator spreads them, under `env`), starting from `catalog` and `base`. NCCL's
// parameters are fitted to the nccl-tests rows; the catalog's copy efficiencies to the copy
// rows (only those the copies' predicted rates depend on), all in one least-squares objective.
Calibration calibrate(const topo::ClusterSpec& spec, const hw::Catalog& catalog, long ranks,
                      const comm::NcclConfig& env, const CalibrationInputs& inputs, const comm::NcclParams& base);
// nccl-tests logs only, on a topology already built.
Calibration calibrate(const topo::Topology& t, long ranks, const comm::NcclConfig& env,
                      const std::vector<NcclTestsLog>& logs, const comm::NcclParams& base);

// The overlay as YAML (documented in docs/calibration-format.md).
std::string calibration_yaml(const Calibration& c);

// Reads an overlay and applies its NCCL parameters to `base`; a malformed file is an
// InputError at its line.
comm::NcclParams apply_calibration(const std::string& text, const std::string& file, const comm::NcclParams& base);
// Reads an overlay and applies its link efficiencies (pcie_copy_efficiency,
// nvlink_copy_efficiency, host_staging_efficiency, pageable_copy_efficiency) to `catalog`.
void apply_calibration(const std::string& text, const std::string& file, hw::Catalog& catalog);

}  // namespace gf::calib
