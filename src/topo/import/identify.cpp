#include "topo/import/identify.hpp"

#include <cmath>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "topo/cluster_loader.hpp"

namespace gf::topo::import {

namespace {

constexpr const char* kFile = "data/import/identify.yaml";

std::string embedded_text() {
  if (const auto text = data::find(kFile)) return std::string(*text);
  throw InputError({kFile, 0, 0}, "", "the importers' identification table is not built in");
}

}  // namespace

Identify load_identify() {
  const YAML::Node root = parse_yaml(embedded_text(), kFile);
  Identify id;
  for (const auto& row : root["gpus_by_pci_device"]) {
    id.gpu_by_device_[row["device"].as<unsigned>()] = row["gpu"].as<std::string>();
  }
  for (const auto& g : root["gpu_preference"]) id.gpu_preference_.push_back(g.as<std::string>());
  for (const auto& kv : root["gpu_by_nvlinks"]) id.gpu_by_nvlinks_[kv.first.as<int>()] = kv.second.as<std::string>();
  for (const auto& kv : root["gpu_without_nvlink_by_sm"]) {
    id.gpu_without_nvlink_by_sm_[kv.first.as<int>()] = kv.second.as<std::string>();
  }
  id.gpu_default_ = root["gpu_default"].as<std::string>();
  for (const auto& row : root["cpus_by_cpuid"]) {
    id.cpus_.push_back({CpuId{row["vendor"].as<std::string>(), row["family"].as<int>(), row["model"].as<int>()},
                        row["cpu"].as<std::string>()});
  }
  for (const auto& kv : root["cpu_default_by_vendor"]) {
    id.cpu_default_by_vendor_[kv.first.as<std::string>()] = kv.second.as<std::string>();
  }
  id.cpu_default_ = root["cpu_default"].as<std::string>();
  for (const auto& n : root["nic_ladder"]) id.nic_ladder_.push_back(n.as<std::string>());
  id.host_memory_GB_ = root["host_memory_GB"].as<double>();
  id.network_default_ = root["network_default"].as<std::string>();
  return id;
}

const Identify& Identify::builtin() {
  static const Identify id = load_identify();
  return id;
}

std::optional<std::string> Identify::gpu_by_pci_device(unsigned device) const {
  const auto it = gpu_by_device_.find(device);
  if (it == gpu_by_device_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Identify::gpu_by_sm(const hw::Catalog& catalog, int sm, int nvlinks) const {
  if (nvlinks == 0) {
    const auto it = gpu_without_nvlink_by_sm_.find(sm);
    if (it == gpu_without_nvlink_by_sm_.end()) return std::nullopt;
    return it->second;
  }
  for (const auto& name : gpu_preference_) {
    const auto it = catalog.gpus().find(name);
    if (it == catalog.gpus().end()) continue;
    const auto& g = it->second;
    if (g.compute_capability == sm && g.nvlink && g.nvlink->links == nvlinks) return name;
  }
  return std::nullopt;
}

std::string Identify::gpu_by_nvlinks(int nvlinks) const {
  const auto it = gpu_by_nvlinks_.find(nvlinks);
  return it == gpu_by_nvlinks_.end() ? gpu_default_ : it->second;
}

std::optional<std::string> Identify::cpu_by_cpuid(const CpuId& id) const {
  for (const auto& [key, cpu] : cpus_) {
    if (key.vendor == id.vendor && key.family == id.family && key.model == id.model) return cpu;
  }
  return std::nullopt;
}

std::string Identify::cpu_default(const std::string& vendor) const {
  const auto it = cpu_default_by_vendor_.find(vendor);
  return it == cpu_default_by_vendor_.end() ? cpu_default_ : it->second;
}

std::string Identify::nic_for_rate(const hw::Catalog& catalog, Bandwidth rate) const {
  for (const auto& name : nic_ladder_) {
    if (catalog.nic(name).max_rate.value() >= rate.value() * (1 - 1e-9)) return name;
  }
  return nic_ladder_.back();
}

Bandwidth Identify::nic_rate_for_link(const hw::Catalog& catalog, int generation, int lanes) const {
  const Bandwidth link = catalog.pcie(generation).line_rate(lanes);
  Bandwidth best = catalog.nic(nic_ladder_.front()).max_rate;
  for (const auto& name : nic_ladder_) {
    const Bandwidth r = catalog.nic(name).max_rate;
    if (r.value() <= link.value()) best = r;
  }
  return best;
}

std::optional<std::string> network_for(const hw::Catalog& catalog, const std::string& family, Bandwidth rate) {
  std::optional<std::string> best;
  double best_rate = 0;
  for (const auto& [name, net] : catalog.networks()) {
    if (net.family != family || net.transport == "tcpx") continue;
    const double r = net.data_rate.value();
    if (r <= rate.value() * (1 + 1e-9) && r > best_rate) {
      best = name;
      best_rate = r;
    }
  }
  return best;
}

std::optional<std::pair<int, std::string>> nvswitch_count_of_preset(const hw::Catalog& catalog, int generation) {
  for (const auto& name : preset_names()) {
    const auto spec = load_preset(name, catalog);
    if (spec.node.gpu_fabric == GpuFabric::nvswitch && spec.node.nvswitch_generation == generation) {
      return std::make_pair(spec.node.nvswitch_count, name);
    }
  }
  return std::nullopt;
}

std::optional<int> pcie_generation_of_rate(const hw::Catalog& catalog, double gt_per_s) {
  for (const auto& [gen, p] : catalog.pcie_generations()) {
    if (std::abs(p.transfer_rate_GTps - gt_per_s) < 0.01) return gen;
  }
  return std::nullopt;
}

}  // namespace gf::topo::import
