#pragma once
// `gpufabric validate --suite training`: each published training run beside the model's
// prediction, the MAPE per source and overall, and the rows skipped with their reasons.
#include <string>
#include <vector>

#include "validate/training_validation.hpp"

namespace gf::report {

std::string training_validation_text(const std::vector<validate::TrainingCheck>& checks);
std::string training_validation_json(const std::vector<validate::TrainingCheck>& checks);

}  // namespace gf::report
