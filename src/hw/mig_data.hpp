#pragma once
// NVIDIA MIG profiles per GPU (data/compute/mig.yaml), read once into plain structs. The scheduler
// (placement slots, sched/mig_layout) and the step models (an instance's SMs and memory,
// work/mig_profile) each take their view from this one table.
#include <string>
#include <vector>

namespace gf::hw {

// One profile as the file states it: the MIG User Guide's table row and `nvidia-smi mig -lgip`/-lgipp.
struct MigProfileData {
  std::string name;             // as nvidia-smi prints it, e.g. "3g.40gb"
  int compute_slices = 0;       // of 7
  double compute_fraction = 0;  // the guide's 'Fraction of SMs' (k/7)
  int memory_slices = 0;        // of 8, each 1/8 of capacity and bandwidth
  int max_instances = 0;        // of this profile on one GPU
  std::vector<int> starts;      // memory-slice indices an instance may begin at (-lgipp)
  int sm_count = 0;             // -lgip's SM column
  double lgip_mem_GiB = 0;      // -lgip's memory, GiB
  bool lgip_estimate = false;   // no -lgip output read for this profile
};

// The MIG profiles of one GPU model (its catalog name), in the file's order.
struct GpuMigData {
  std::string gpu;
  std::vector<MigProfileData> profiles;
};

// Every GPU of mig.yaml, in the file's order. Built on first use (thread-safe); no YAML::Node
// outlives the read, because the planner's threads look profiles up at the same time and yaml-cpp
// does not make concurrent reads of one node safe.
const std::vector<GpuMigData>& mig_data();
// The GPU's entry, or nullptr when mig.yaml has none (no MIG).
const GpuMigData* mig_data_of(const std::string& gpu);

}  // namespace gf::hw
