#pragma once
// A job as the scheduler sees it: what each of its pods asks for (whole GPUs, a share of one
// GPU, or a MIG instance, with CPU and memory), how many pods must start together (a gang, as
// Volcano and Kueue schedule them), when it arrives and how long it runs.
#include <optional>
#include <string>
#include <vector>

namespace gf::sched {

struct PodRequest {
  long cpu_milli = 0;
  long memory_mib = 0;
  int gpus = 0;                         // whole GPUs
  int share_milli = 0;                  // a share of one GPU, 1..999 thousandths (GPU-sharing pods), with gpus == 0
  std::string mig;                      // a MIG profile, with gpus == 0 and share_milli == 0
  std::vector<std::string> gpu_models;  // the GPU models it may run on; empty: any

  [[nodiscard]] bool wants_gpu() const { return gpus > 0 || share_milli > 0 || !mig.empty(); }
};

// A training workload whose run time the training model gives for the placement it gets.
struct TrainingWork {
  std::string model;  // a model-library name (`gpufabric train --list`)
  long steps = 0;
  long tp = 1;
  long pp = 1;
  long micro_batch = 1;
  long global_batch = 0;  // 0: micro batch x DP
};

struct Job {
  std::string name;
  int line = 0;  // in its trace file
  double submit = 0;
  // Seconds it runs where it is placed best; for a training workload, filled in from the model.
  double duration = 0;
  // The trace shows it deleted at this time while still pending (it never ran): it leaves the
  // queue then, or, when it did start, stops then. Negative: it runs its duration.
  double deadline = -1;
  PodRequest pod;
  int pods = 1;  // all or none
  std::string qos;
  std::optional<TrainingWork> training;
  double recorded_queue = -1;  // the trace's own queueing delay, when it has one

  [[nodiscard]] double gpu_demand() const;  // GPUs of the whole job (shares as fractions; MIG as compute/7)
};

}  // namespace gf::sched
