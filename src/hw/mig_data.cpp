#include "hw/mig_data.hpp"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include <fmt/format.h>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::hw {

namespace {

constexpr const char* kFile = "data/compute/mig.yaml";
constexpr int kMemorySlices = 8;

MigProfileData read_profile(const YAML::Node& p) {
  MigProfileData m;
  m.name = p["name"].Scalar();
  m.compute_slices = p["compute_slices"].as<int>();
  m.compute_fraction = p["compute_fraction"].as<double>();
  m.memory_slices = p["memory_slices"].as<int>();
  m.max_instances = p["max_instances"].as<int>();
  m.starts = p["starts"].as<std::vector<int>>();
  m.sm_count = p["sm_count"].as<int>();
  m.lgip_mem_GiB = p["lgip_mem_GiB"].as<double>();
  m.lgip_estimate = p["lgip_estimate"] && p["lgip_estimate"].as<bool>();
  // The file is ours and embedded: a start that runs past the 8 slices is a data error.
  for (int st : m.starts)
    if (st < 0 || st + m.memory_slices > kMemorySlices)
      throw std::logic_error(fmt::format("{}: {} start {} runs past slice 8", kFile, m.name, st));
  return m;
}

std::vector<GpuMigData> load() {
  const YAML::Node root = parse_yaml(std::string(data::file(kFile)), kFile);
  std::vector<GpuMigData> all;
  for (const auto& g : root["gpus"]) {
    GpuMigData gpu{g["gpu"].Scalar(), {}};
    for (const auto& p : g["profiles"]) gpu.profiles.push_back(read_profile(p));
    all.push_back(std::move(gpu));
  }
  return all;
}

}  // namespace

const std::vector<GpuMigData>& mig_data() {
  static const std::vector<GpuMigData> all = load();
  return all;
}

const GpuMigData* mig_data_of(const std::string& gpu) {
  for (const auto& g : mig_data())
    if (g.gpu == gpu) return &g;
  return nullptr;
}

}  // namespace gf::hw
