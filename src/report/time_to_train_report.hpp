#pragma once
// The time-to-train suite (`validate --suite time-to-train`) as a table with its error, and as JSON.
#include <string>
#include <vector>

#include "validate/time_to_train_validation.hpp"

namespace gf::report {

std::string time_to_train_text(const std::vector<validate::TimeToTrainCheck>& checks);
std::string time_to_train_json(const std::vector<validate::TimeToTrainCheck>& checks);
// Mean absolute percentage error of the evaluated rows (0 when none).
double time_to_train_mape(const std::vector<validate::TimeToTrainCheck>& checks);

}  // namespace gf::report
