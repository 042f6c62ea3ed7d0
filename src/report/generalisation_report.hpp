#pragma once
// `validate`'s generalisation section: each suite's in-sample and leave-one-source-out error, per
// source and per band class, with the band each class gives (validate/generalisation.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "band/error_band.hpp"
#include "validate/generalisation.hpp"

namespace gf::report {

std::string generalisation_text(const validate::Generalisation& g, const std::vector<band::Band>& bands);
nlohmann::json generalisation_json(const validate::Generalisation& g, const std::vector<band::Band>& bands);
// One line per suite: rows, in-sample MAPE, held-out rows and MAPE, calibration sources.
std::string generalisation_summary_text(const std::vector<validate::Generalisation>& suites);

// A band as JSON for a command's headline figure: low and high of the quantity, its class, the
// rows behind it; "unvalidated" instead of low/high where the class has too few rows.
nlohmann::json band_json(const band::Band& b, double predicted, band::Direction d);

}  // namespace gf::report
