#pragma once
// Goodput of a long training run: the fraction of wall time that advances training, given
// interruptions at a cited per-GPU rate, the time to write a checkpoint through the cluster's
// storage path, the time to restart, and the checkpoint interval that maximises it (Young's
// first-order optimum, sqrt(2 x write time x mean time between interruptions); Daly 2006 refines
// it for restarts). Losses per interruption: half an interval of work on average, plus the
// restart and the read of the last checkpoint.
#include <string>

#include "core/units.hpp"

namespace gf::plan {

// Meta, "The Llama 3 Herd of Models" (arXiv 2407.21783, 2024), section 3.3.4: 419 unexpected
// interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs (about 78% attributed
// to hardware). Per GPU-hour: 419 / (16,384 x 54 x 24).
inline constexpr double kLlama3Interruptions = 419;
inline constexpr double kLlama3Gpus = 16384;
inline constexpr double kLlama3Hours = 54 * 24;
inline constexpr double kInterruptionsPerGpuHour = kLlama3Interruptions / (kLlama3Gpus * kLlama3Hours);

// Restart after an interruption, before the checkpoint is read: a median automated retry
// interval of 11 minutes (SK Telecom / Upstage, B200 cluster of 504 GPUs, 2026 technical report,
// as summarised in ../shared/research/failures.md). An assumption for every cluster.
inline constexpr double kRestartSeconds = 11 * 60;

struct GoodputInputs {
  long gpus = 0;
  Bytes checkpoint;  // model and optimizer state written at each checkpoint
  Bandwidth write;   // the cluster's aggregate checkpoint write rate
  Bandwidth read;    // and read rate, on restart
  double interruptions_per_gpu_hour = kInterruptionsPerGpuHour;
  Seconds restart{kRestartSeconds};
};

struct Goodput {
  Seconds mtbi;  // mean time between interruptions of the job
  Seconds checkpoint_write;
  Seconds checkpoint_read;
  Seconds interval;     // between checkpoints (Young)
  double fraction = 1;  // of wall time that trains
  double interruptions_per_day = 0;
};

Goodput goodput(const GoodputInputs& in);

}  // namespace gf::plan
