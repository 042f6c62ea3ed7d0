#include "work/mig_profile.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "hw/mig_data.hpp"

namespace gf::work {

namespace {

constexpr const char* kFile = "data/compute/mig.yaml";

struct GpuProfiles {
  std::string gpu;
  std::vector<MigProfile> profiles;  // in the file's order
};

// The step models' view of hw::mig_data(): fractions and bytes instead of slices and GiB.
std::vector<GpuProfiles> load() {
  std::vector<GpuProfiles> all;
  for (const auto& g : hw::mig_data()) {
    GpuProfiles gp{g.gpu, {}};
    for (const auto& p : g.profiles) {
      MigProfile m;
      m.name = p.name;
      m.compute_fraction = p.compute_fraction;
      m.memory_fraction = static_cast<double>(p.memory_slices) / 8.0;
      m.sms = p.sm_count;
      m.memory_bytes = p.lgip_mem_GiB * 1024 * 1024 * 1024;
      m.estimated = p.lgip_estimate;
      m.max_instances = p.max_instances;
      gp.profiles.push_back(std::move(m));
    }
    all.push_back(std::move(gp));
  }
  return all;
}

// Built on first use; C++ makes the initialisation of a function-local static thread-safe.
const std::vector<GpuProfiles>& table() {
  static const std::vector<GpuProfiles> all = load();
  return all;
}

const GpuProfiles* profiles_of(const hw::GpuSpec& gpu) {
  for (const auto& g : table())
    if (g.gpu == gpu.name) return &g;
  return nullptr;
}

}  // namespace

MigProfile mig_profile(const hw::GpuSpec& gpu, const std::string& name, const std::string& flag) {
  const GpuProfiles* g = profiles_of(gpu);
  if (g == nullptr) {
    throw InputError({}, flag, fmt::format("no MIG profiles for the {} in {}", gpu.name, kFile),
                     "a GPU with MIG: A100, H100, H200, B200");
  }
  for (const auto& p : g->profiles)
    if (p.name == name) return p;
  throw InputError({}, flag, fmt::format("the {} has no MIG profile '{}'", gpu.name, name),
                   join(mig_profile_names(gpu)));
}

std::vector<std::string> mig_profile_names(const hw::GpuSpec& gpu) {
  std::vector<std::string> names;
  if (const GpuProfiles* g = profiles_of(gpu))
    for (const auto& p : g->profiles) names.push_back(p.name);
  return names;
}

}  // namespace gf::work
