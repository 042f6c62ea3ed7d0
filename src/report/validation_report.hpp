#pragma once
#include <string>
#include <vector>

#include "validate/collective_validation.hpp"
#include "validate/path_validation.hpp"

namespace gf::report {

// Predicted beside measured for each row, its error, and the MAPE per group.
std::string validation_text(const std::vector<validate::PathResult>& results);
std::string validation_json(const std::vector<validate::PathResult>& results);
std::string validation_csv(const std::vector<validate::PathResult>& results);

// Collectives: each row's prediction beside the nccl-tests measurement, and MAPE per size band.
std::string collectives_text(const std::vector<validate::CollectiveCheck>& checks);
std::string collectives_json(const std::vector<validate::CollectiveCheck>& checks);
std::string collectives_csv(const std::vector<validate::CollectiveCheck>& checks);

struct BandError {
  std::string group;
  std::size_t rows = 0;
  double mape = 0;
};
std::vector<BandError> collective_band_errors(const std::vector<validate::CollectiveCheck>& checks);

}  // namespace gf::report
