#pragma once
// Validation of the training model against published runs (data/validation/training.yaml,
// docs/training-validation-format.md): each row's model, GPUs and layout run through
// work::train_step, compared on the figure the source published (tokens/s per GPU, TFLOP/s per
// GPU in the source's FLOP convention, MFU, samples/s). Rows using what the model does not
// cover yet (pipeline, context or expert parallelism, full sharding, GPUs without a preset) are
// listed as skipped with the reason, not silently dropped.
#include <string>
#include <vector>

#include "hw/catalog.hpp"

namespace gf::validate {

struct TrainingCheck {
  std::string id;
  std::string source_id;
  std::string model;
  std::string gpu;      // the catalog GPU the row ran on
  double params_b = 0;  // the model's parameters, billions (MoE: every expert)
  bool moe = false;
  bool calibration = false;  // the row set a model constant (`calibration: true`)
  long gpus = 0;
  std::string metric;  // "tokens/s/GPU", "TFLOP/s/GPU (model)", "MFU", "samples/s"
  double measured = 0;
  double predicted = 0;
  double error = 0;     // (predicted - measured) / measured
  std::string skipped;  // why the row was not evaluated (empty when it was)
};

std::vector<TrainingCheck> check_training(const hw::Catalog& catalog);
// The same for rows of that format in `text` (`validate --suite training --file FILE`). A field
// whose value the model does not know (precision, recompute, fsdp, kernels, flops_convention) is
// an InputError at its line, not a silent default.
std::vector<TrainingCheck> check_training(const std::string& text, const std::string& file, const hw::Catalog& catalog);

}  // namespace gf::validate
