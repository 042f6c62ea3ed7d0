#pragma once
#include <string>
#include <vector>

#include "validate/path_validation.hpp"

namespace gf::report {

// Predicted beside measured for each row, its error, and the MAPE per group.
std::string validation_text(const std::vector<validate::PathResult>& results);
std::string validation_json(const std::vector<validate::PathResult>& results);
std::string validation_csv(const std::vector<validate::PathResult>& results);

}  // namespace gf::report
