#pragma once
// Validation of the serving model against published runs (data/validation/serving.yaml,
// docs/serving-validation-format.md): each row's model, GPUs, layout, precision and load run
// through work::simulate_serving, compared on output tokens per second (offline and
// fixed-concurrency rows: throughput is what the model predicts), and on TTFT and TPOT where the
// source gives them (reported apart: latency rows). Server rows (a Poisson rate) are checked on
// latency, and on throughput only as whether the predicted engine keeps up with the rate. Rows
// the model cannot take (no preset for the GPU, no input length, attention data parallelism)
// are listed as skipped with the reason.
#include <string>
#include <vector>

#include "hw/catalog.hpp"

namespace gf::validate {

struct ServingCheck {
  std::string id;
  std::string source_id;
  std::string model;
  std::string gpu;
  long gpus = 0;
  std::string scenario;  // offline | concurrency | server
  std::string metric;    // "output tok/s", "TTFT mean ms", "TPOT p50 ms", ...
  bool latency = false;
  double measured = 0;
  double predicted = 0;
  double error = 0;          // (predicted - measured) / measured
  std::string bound;         // what the model says bounds the run
  bool calibration = false;  // the row set a model constant (`calibration: true`)
  std::string skipped;       // why the row was not evaluated (empty when it was)
};

std::vector<ServingCheck> check_serving(const hw::Catalog& catalog);
// The same for rows of that format in `text` (`validate --suite serving --file FILE`). An unknown
// scenario or KV cache type is an InputError at its line, not a silent default.
std::vector<ServingCheck> check_serving(const std::string& text, const std::string& file, const hw::Catalog& catalog);

}  // namespace gf::validate
