#pragma once
// What one training input costs on its way to a GPU: bytes read, CPU work to decode and
// augment it, bytes copied to the GPU, and the GPU work it feeds. Read from data/workloads or a
// user's YAML file (format in docs/workload-format.md).
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace gf::work {

// Decoding on the GPU (nvJPEG/NVDEC through DALI, say): the encoded sample is copied instead
// of the decoded one, and the GPU's decoder does the work the CPU would have done.
struct GpuDecode {
  double seconds_per_sample = 0;      // decoder time per sample on one GPU
  double cpu_seconds_per_sample = 0;  // what stays on the CPU (reading, batching, parsing)
  bool hardware_engine = false;       // a decode engine beside the SMs: overlaps with compute
};

struct InputWorkload {
  std::string name;
  std::string description;
  Bytes sample_on_disk;             // mean encoded sample as stored
  Bytes decoded;                    // sample after CPU preprocessing
  Bytes h2d_per_sample;             // copied to the GPU per sample with CPU decode
  Bytes h2d_per_sample_gpu_decode;  // copied with GPU decode (the encoded sample)
  double cpu_seconds_per_sample;    // core-seconds of decode and augmentation
  Bytes cpu_memory_per_sample;      // DRAM traffic of that work (reads plus writes)
  std::optional<GpuDecode> gpu_decode;
  double flops_per_sample = 0;  // training FLOPs (forward and backward)
  std::string precision;        // key into the GPU's dense TFLOPS table
  double peak_fraction = 0;     // achieved fraction of dense peak on the GPU
  int batch_per_gpu = 0;
  int loader_workers_per_gpu = 0;  // the recipe's data-loader processes per GPU; 0 = not stated
  Bytes d2h_per_batch;             // loss, metrics, anything copied back per step
  std::string file;                // the file it was read from, for messages
};

// The built-in workloads' names, sorted.
std::vector<std::string> builtin_workloads();

// A built-in name or a path to a YAML file; anything else is an InputError for `field`.
InputWorkload load_workload(const std::string& name_or_path, const std::string& field = "--input");

// Parses a workload from YAML text (`file` names it in messages).
InputWorkload parse_workload(const std::string& text, const std::string& file);

}  // namespace gf::work
