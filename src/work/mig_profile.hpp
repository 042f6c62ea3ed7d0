#pragma once
// NVIDIA MIG profiles (data/compute/mig.yaml, from NVIDIA's MIG User Guide): what slice of a GPU
// an instance gets. Compute slices are 1/7 of the SMs usable in MIG mode; memory slices 1/8 of
// memory capacity and bandwidth, as the guide defines them.
#include <string>
#include <vector>

#include "hw/gpu.hpp"

namespace gf::work {

struct MigProfile {
  std::string name;             // as nvidia-smi prints it, e.g. "1g.10gb"
  double compute_fraction = 0;  // of the GPU's SMs
  double memory_fraction = 0;   // of its memory bandwidth (memory slices / 8)
  double memory_bytes = 0;      // capacity as the profile states it (GB, 10^9 bytes)
  int max_instances = 0;        // of this profile on one GPU
};

// The GPU's profile of that name; an InputError naming `flag` and listing the GPU's profiles
// (or saying the GPU has none in the file).
MigProfile mig_profile(const hw::GpuSpec& gpu, const std::string& name, const std::string& flag = "--mig");
// The names of every profile the GPU has, in the file's order (empty: no MIG).
std::vector<std::string> mig_profile_names(const hw::GpuSpec& gpu);

}  // namespace gf::work
