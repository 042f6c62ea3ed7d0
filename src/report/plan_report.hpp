#pragma once
// `gpufabric plan` as one self-contained HTML page: the recommendation and its reasons, a Pareto
// chart per workload, scaling curves, step-time breakdowns, a drawing of the chosen topology and a
// sortable table of every candidate. The page is meant to be mailed or attached to a ticket, so it
// loads nothing: CSS, script and SVG are inline, and its Content-Security-Policy forbids fetching.
#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace gf::report {

// A Pareto chart draws at most this many points (the front and the chosen point always among
// them); past a few thousand circles a browser slows down and the cloud reads no better.
inline constexpr std::size_t kPlanScatterLimit = 5000;
// The topology drawing shows this many nodes, leaf and spine switches per row, then "… N more".
inline constexpr long kPlanDrawLimit = 16;

// Renders the JSON that `gpufabric plan --format json` prints. Any field may be missing, null or of
// the wrong type: that part of the page is left out or shows "—". Throws std::invalid_argument only
// when `result` is not an object. Every string taken from `result` is HTML-escaped, and the same
// input gives byte-identical output (no timestamps, no generated ids).
// `extra_html`: sections added before the footer (the scheduling timeline of `plan --timeline`).
std::string plan_report_html(const nlohmann::json& result, const std::string& extra_html = {});

}  // namespace gf::report
