#pragma once
// MIG layouts of one GPU, as `nvidia-smi mig -lgipp` states them: each profile holds a run of
// memory slices (of 8) that must start at one of its allowed indices, and compute slices (of 7).
// A GPU's state is which memory slices its instances hold, so packing, fragmentation and the
// gain from reconfiguring are exact for the placement rules NVIDIA publishes
// (data/compute/mig.yaml).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gf::sched {

struct MigProfileSlots {
  std::string name;  // as nvidia-smi prints it, e.g. "3g.40gb"
  int compute_slices = 0;
  int memory_slices = 0;
  int max_instances = 0;
  std::vector<int> starts;  // memory-slice indices an instance may begin at
};

// The MIG profiles of one GPU model; empty `profiles` when it has no MIG.
struct MigTable {
  std::string gpu;
  std::vector<MigProfileSlots> profiles;
  [[nodiscard]] const MigProfileSlots* find(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> names() const;
};

// The table of a catalog GPU (data/compute/mig.yaml), or nullptr when it has no MIG.
const MigTable* mig_table(const std::string& gpu);
// Every GPU with MIG profiles, in the file's order.
std::vector<std::string> mig_gpus();

// One instance on a GPU.
struct MigInstance {
  int profile = 0;  // index into the table's profiles
  int start = 0;    // first memory slice
};

// The instances of one GPU and the slices they hold.
class MigGpu {
public:
  explicit MigGpu(const MigTable& table) : table_(&table) {}

  // The first allowed start where `profile` fits now (its slices free, compute slices and the
  // profile's instance count left), or nullopt.
  [[nodiscard]] std::optional<int> fit(int profile) const;
  // Creates the instance at `start` (must be one `fit` allows); returns its index.
  int add(int profile, int start);
  void remove(int profile, int start);

  [[nodiscard]] std::uint8_t memory_mask() const { return mask_; }
  [[nodiscard]] int compute_used() const { return compute_; }
  [[nodiscard]] const std::vector<MigInstance>& instances() const { return instances_; }
  [[nodiscard]] bool empty() const { return instances_.empty(); }
  // Whether the GPU could host `profile` beside its present instances if they were re-created
  // at other starts (a reconfiguration, which needs the instances idle): the slack is there but
  // the present starts block it.
  [[nodiscard]] bool fits_after_repack(int profile) const;

private:
  [[nodiscard]] bool free_at(const MigProfileSlots& p, int start) const;
  const MigTable* table_;
  std::vector<MigInstance> instances_;
  std::uint8_t mask_ = 0;
  int compute_ = 0;
};

// Kubernetes' NVIDIA device plugin exposes MIG devices one of two ways: `single` (every GPU of
// a node cut into the same profile, advertised as nvidia.com/gpu) or `mixed` (any valid mix,
// advertised per profile as nvidia.com/mig-<profile>).
enum class MigStrategy { single, mixed };

// The partitioner: packs MIG requests (profile names) onto `gpus` GPUs of one model, largest
// profiles first, each at the first start that leaves the most room. Under `single`, each GPU
// takes one profile only.
struct PackResult {
  std::vector<std::vector<MigInstance>> gpus;  // per GPU, its instances
  std::vector<int> placed_gpu;                 // per request, the GPU it went to, or -1
  long unplaced = 0;
  // Requests that did not fit as the instances lie but would if a GPU were reconfigured: the
  // request, the GPU, and the instances that would move.
  struct Hint {
    std::size_t request = 0;
    int gpu = 0;
    std::string text;
  };
  std::vector<Hint> reconfigure;
};
PackResult pack_mig(const MigTable& table, const std::vector<std::string>& requests, int gpus, MigStrategy strategy);
// The `nvidia-smi mig -lgipp` style layout of one packed GPU: "3g.40gb@0 2g.20gb@4 1g.10gb@6".
std::string describe(const MigTable& table, const std::vector<MigInstance>& instances);

}  // namespace gf::sched
