#pragma once
// `gpufabric validate --suite serving`: each published serving run beside the model's
// prediction; the throughput MAPE per source and overall, latency rows apart, and the rows
// skipped with their reasons.
#include <string>
#include <vector>

#include "validate/serving_validation.hpp"

namespace gf::report {

// Mean absolute percentage error of the throughput rows of offline and fixed-concurrency runs
// (what the model predicts rather than what the load fixes).
double serving_throughput_mape(const std::vector<validate::ServingCheck>& checks);

std::string serving_validation_text(const std::vector<validate::ServingCheck>& checks);
std::string serving_validation_json(const std::vector<validate::ServingCheck>& checks);

}  // namespace gf::report
