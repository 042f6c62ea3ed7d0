#pragma once
// Generalisation, not fit (issue 35): every suite's error scored twice, on every row (in-sample)
// and on the rows of sources that set no model constant (leave-one-source-out). A source with a
// row marked `calibration` gave a constant its value; gpufabric has no refit that could score
// such a source's rows without it, so the whole source is left out of the held-out figure and
// listed as calibration (its sibling rows ran on the same machine and harness as the row a
// constant came from, so they would flatter the model too). The held-out rows also give the
// error bands (band/error_band.hpp).
#include <string>
#include <vector>

#include "band/error_band.hpp"
#include "validate/collective_validation.hpp"
#include "validate/path_validation.hpp"
#include "validate/serving_validation.hpp"
#include "validate/training_validation.hpp"

namespace gf::validate {

// One scored validation row, as generalisation sees it.
struct ScoredRow {
  std::string id;
  std::string source;                // the publication (a source_id, or the cited document)
  std::vector<std::string> classes;  // its band classes, most specific first (band/band_class.hpp)
  double error = 0;                  // (predicted - measured) / measured, on the row's own metric
  double ratio = 1;                  // measured / predicted of the class's quantity (see band::Band)
  bool calibration = false;          // this row set a model constant
};

struct ErrorGroup {
  std::string name;
  int rows = 0;
  double mape = 0;           // mean |error|
  double bias = 0;           // mean error: > 0 where the model is optimistic on a rate
  bool calibration = false;  // a source that set a constant (by_source only)
};

struct Generalisation {
  std::string suite;
  int rows = 0;  // in-sample: every scored row
  double mape = 0;
  int held_out_rows = 0;  // rows of sources that set no constant
  double held_out_mape = 0;
  std::vector<std::string> calibration_sources;
  int calibration_rows = 0;  // every row of those sources
  // The bands themselves held out: for each source, the bands computed without it, and how many
  // of its rows (in a validated class) fell inside theirs. What a user's cluster, never seen,
  // should expect of the printed interval.
  int band_checked = 0;
  int band_inside = 0;
  std::vector<ErrorGroup> by_source;  // every source (in-sample)
  std::vector<ErrorGroup> by_class;   // held-out rows, at every level of their classes
};

Generalisation generalise(const std::string& suite, const std::vector<ScoredRow>& rows);

// One band per class met at any level of the held-out rows' classes, in class order.
std::vector<band::Band> compute_bands(const std::string& suite, const std::vector<ScoredRow>& rows);
// The table as data/validation/error_bands.yaml holds it.
std::string bands_yaml(const std::vector<band::Band>& bands);

// Each suite's checks as scored rows (skipped and excluded rows left out; serving's server rows
// judged on throughput at the offered rate are reported apart and left out too).
std::vector<ScoredRow> scored(const std::vector<TrainingCheck>& checks);
std::vector<ScoredRow> scored(const std::vector<ServingCheck>& checks);
std::vector<ScoredRow> scored(const std::vector<CollectiveCheck>& checks);
std::vector<ScoredRow> scored(const std::vector<PathResult>& results);

}  // namespace gf::validate
