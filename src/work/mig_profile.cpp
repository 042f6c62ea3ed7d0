#include "work/mig_profile.hpp"

#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "data/embedded.hpp"

namespace gf::work {

namespace {

constexpr const char* kFile = "data/compute/mig.yaml";

const YAML::Node& root() {
  static const YAML::Node r = [] {
    for (const auto& f : data::embedded_files())
      if (f.path == kFile) return parse_yaml(std::string(f.text), kFile);
    throw std::logic_error(std::string(kFile) + " is not embedded");
  }();
  return r;
}

}  // namespace

MigProfile mig_profile(const hw::GpuSpec& gpu, const std::string& name, const std::string& flag) {
  for (const auto& g : root()["gpus"]) {
    if (g["gpu"].Scalar() != gpu.name) continue;
    std::vector<std::string> names;
    for (const auto& p : g["profiles"]) {
      names.push_back(p["name"].Scalar());
      if (p["name"].Scalar() != name) continue;
      MigProfile m;
      m.name = name;
      m.compute_fraction = p["compute_fraction"].as<double>();
      m.memory_fraction = p["memory_slices"].as<double>() / 8.0;
      m.memory_bytes = p["memory_GB"].as<double>() * 1e9;
      m.max_instances = p["max_instances"].as<int>();
      return m;
    }
    throw InputError({}, flag, fmt::format("the {} has no MIG profile '{}'", gpu.name, name), join(names));
  }
  throw InputError({}, flag, fmt::format("no MIG profiles for the {} in {}", gpu.name, kFile),
                   "a GPU with MIG: A100, H100, H200, B200");
}

std::vector<std::string> mig_profile_names(const hw::GpuSpec& gpu) {
  std::vector<std::string> names;
  for (const auto& g : root()["gpus"]) {
    if (g["gpu"].Scalar() != gpu.name) continue;
    for (const auto& p : g["profiles"]) names.push_back(p["name"].Scalar());
  }
  return names;
}

}  // namespace gf::work
