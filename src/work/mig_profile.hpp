#pragma once
// NVIDIA MIG profiles (data/compute/mig.yaml, from NVIDIA's MIG User Guide and `nvidia-smi mig
// -lgip`): what slice of a GPU an instance gets. Its SMs and memory are the ones -lgip prints (not
// k/7 of the GPU: GH100's 3g has 60 SMs and its 4g 64 of 132); memory slices carry 1/8 of the
// bandwidth, as the guide defines them.
#include <string>
#include <vector>

#include "hw/gpu.hpp"

namespace gf::work {

struct MigProfile {
  std::string name;             // as nvidia-smi prints it, e.g. "1g.10gb"
  double compute_fraction = 0;  // compute slices / 7, the guide's 'Fraction of SMs' (names, ordering)
  double memory_fraction = 0;   // of its memory bandwidth (memory slices / 8)
  // As `nvidia-smi mig -lgip` prints them: the instance's SMs (H100's 3g has 60 of 132, not 3/7)
  // and its memory in GiB (what CUDA sees inside the instance, not the name's GB).
  int sms = 0;
  double memory_bytes = 0;
  bool estimated = false;  // no -lgip output read for this profile (mig.yaml says how it was derived)
  int max_instances = 0;   // of this profile on one GPU
};

// The GPU's profile of that name; an InputError naming `flag` and listing the GPU's profiles
// (or saying the GPU has none in the file).
MigProfile mig_profile(const hw::GpuSpec& gpu, const std::string& name, const std::string& flag = "--mig");
// The names of every profile the GPU has, in the file's order (empty: no MIG).
std::vector<std::string> mig_profile_names(const hw::GpuSpec& gpu);

}  // namespace gf::work
