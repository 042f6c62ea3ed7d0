#pragma once
// Validation of the planner's time to train against published whole runs
// (data/validation/time_to_train.yaml): each row's model, tokens, batch and sequence on that many
// GPUs of the preset holding the run's GPU, searched over every layout (or the published one),
// with goodput; predicted GPU-hours (GPUs x wall-clock days x 24) against the measured ones.
// This checks the whole chain the planner's answer rests on: the step model, the layout search,
// and the interruption and checkpoint overheads.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "hw/catalog.hpp"

namespace gf::validate {

struct TimeToTrainRow {
  std::string id;
  std::string model;
  double tokens = 0;
  double global_batch_tokens = 0;
  long seq = 0;
  std::string preset;
  long gpus = 0;
  bool gpus_assumed = false;
  long tp = 0, pp = 0, cp = 0, vpp = 0;  // 0: searched
  double measured_gpu_hours = 0;
  double measured_days = 0;
  std::string source;
  std::string note;
  SourceLocation where;
};

struct TimeToTrainCheck {
  TimeToTrainRow row;
  double measured_gpu_hours = 0;
  double predicted_gpu_hours = 0;
  double predicted_days = 0;
  double error = 0;  // (predicted - measured) / measured
  double mfu = 0;
  double goodput = 0;
  std::string layout;
  std::string skipped;  // why the row was not evaluated (empty when it was)
};

std::vector<TimeToTrainRow> parse_time_to_train_rows(const std::string& text, const std::string& file);
std::vector<TimeToTrainRow> builtin_time_to_train_rows();
std::vector<TimeToTrainCheck> check_time_to_train(const std::vector<TimeToTrainRow>& rows, const hw::Catalog& catalog);

}  // namespace gf::validate
