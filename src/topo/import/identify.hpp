#pragma once
// What the importers know about naming a file's devices with catalog models, read once from
// data/import/identify.yaml (each row cited there). Every lookup that finds nothing returns
// nullopt, so the importer can say which default it chose and why.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/catalog.hpp"

namespace gf::topo::import {

struct CpuId {
  std::string vendor;  // CPUID vendor string: GenuineIntel, AuthenticAMD
  int family = 0;
  int model = 0;
};

class Identify;
Identify load_identify();

class Identify {
public:
  // The built-in tables (data/import/identify.yaml), loaded on first use.
  static const Identify& builtin();

  [[nodiscard]] std::optional<std::string> gpu_by_pci_device(unsigned device) const;
  // With NVLink: the first GPU of the preference list with this compute capability (sm x 10) and
  // NVLink count. Without: the table's GPU for that compute capability.
  [[nodiscard]] std::optional<std::string> gpu_by_sm(const hw::Catalog& catalog, int sm, int nvlinks) const;
  // A GPU for a text that does not name it (topo -m), by its NVLinks per GPU (0: none).
  [[nodiscard]] std::string gpu_by_nvlinks(int nvlinks) const;
  [[nodiscard]] std::optional<std::string> cpu_by_cpuid(const CpuId& id) const;
  [[nodiscard]] std::string cpu_default(const std::string& vendor) const;
  // The first NIC of the ladder whose line rate is at least `rate`, or the fastest.
  [[nodiscard]] std::string nic_for_rate(const hw::Catalog& catalog, Bandwidth rate) const;
  // The fastest line rate of the ladder a PCIe link of this generation and width carries.
  [[nodiscard]] Bandwidth nic_rate_for_link(const hw::Catalog& catalog, int generation, int lanes) const;
  [[nodiscard]] double host_memory_GB() const { return host_memory_GB_; }
  [[nodiscard]] const std::string& network_default() const { return network_default_; }

private:
  friend Identify load_identify();
  std::map<unsigned, std::string> gpu_by_device_;
  std::vector<std::string> gpu_preference_;
  std::map<int, std::string> gpu_by_nvlinks_;
  std::map<int, std::string> gpu_without_nvlink_by_sm_;
  std::string gpu_default_;
  std::vector<std::pair<CpuId, std::string>> cpus_;
  std::map<std::string, std::string> cpu_default_by_vendor_;
  std::string cpu_default_;
  std::vector<std::string> nic_ladder_;
  double host_memory_GB_ = 0;
  std::string network_default_;
};

// The catalog network of `family` at `rate` (the fastest one not above it), or nullopt.
std::optional<std::string> network_for(const hw::Catalog& catalog, const std::string& family, Bandwidth rate);

// The NVSwitch chip count of NVIDIA's baseboard for a switch generation, read from the first
// built-in preset with that generation (dgx-a100: 6, dgx-h100: 4, dgx-b200: 2); the preset's
// name is returned beside it so the output can say where the count came from.
std::optional<std::pair<int, std::string>> nvswitch_count_of_preset(const hw::Catalog& catalog, int generation);

// The catalog PCIe generation with this transfer rate (GT/s), or nullopt.
std::optional<int> pcie_generation_of_rate(const hw::Catalog& catalog, double gt_per_s);

}  // namespace gf::topo::import
