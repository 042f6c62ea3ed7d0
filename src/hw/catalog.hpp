#pragma once
// The hardware catalog: every figure the model uses, loaded from cited YAML data files.
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "hw/gpu.hpp"
#include "hw/host.hpp"
#include "hw/link_generations.hpp"
#include "hw/network.hpp"

namespace gf::hw {

class Catalog {
public:
  // The catalog built into the binary (data/catalog/*.yaml at build time).
  static Catalog builtin();
  // Adds the entries of one YAML document; same-named entries are replaced.
  void load_text(const std::string& text, const std::string& file);
  // Adds every *.yaml file in `dir`, in name order (user overrides).
  void load_directory(const std::string& dir);

  // Lookups by name; an unknown name is an InputError at `where`/`field` listing valid names.
  const GpuSpec& gpu(const std::string& name, const SourceLocation& where = {}, const std::string& field = "gpu") const;
  const CpuSpec& cpu(const std::string& name, const SourceLocation& where = {}, const std::string& field = "cpu") const;
  const NicSpec& nic(const std::string& name, const SourceLocation& where = {}, const std::string& field = "nic") const;
  const SwitchSpec& network_switch(const std::string& name, const SourceLocation& where = {},
                                   const std::string& field = "switch") const;
  const NetworkTech& network(const std::string& name, const SourceLocation& where = {},
                             const std::string& field = "network") const;
  const StorageSpec& storage(const std::string& name, const SourceLocation& where = {},
                             const std::string& field = "storage") const;
  const PcieGeneration& pcie(int generation, const SourceLocation& where = {},
                             const std::string& field = "pcie.generation") const;
  const NvlinkGeneration& nvlink(int generation, const SourceLocation& where = {},
                                 const std::string& field = "nvlink.generation") const;
  const NvswitchGeneration& nvswitch(int generation, const SourceLocation& where = {},
                                     const std::string& field = "nvswitch.generation") const;

  [[nodiscard]] const HostStaging& host_staging() const { return host_staging_; }
  // Host-to-device copies from pageable memory: the fraction of the pinned rate they reach.
  [[nodiscard]] const HostStaging& pageable_copy() const { return pageable_copy_; }
  [[nodiscard]] const std::map<std::string, GpuSpec>& gpus() const { return gpus_; }
  [[nodiscard]] const std::map<std::string, CpuSpec>& cpus() const { return cpus_; }
  [[nodiscard]] const std::map<std::string, NicSpec>& nics() const { return nics_; }
  [[nodiscard]] const std::map<std::string, SwitchSpec>& switches() const { return switches_; }
  [[nodiscard]] const std::map<std::string, NetworkTech>& networks() const { return networks_; }
  [[nodiscard]] const std::map<std::string, StorageSpec>& storages() const { return storage_; }
  [[nodiscard]] const std::map<int, PcieGeneration>& pcie_generations() const { return pcie_; }
  [[nodiscard]] const std::map<int, NvlinkGeneration>& nvlink_generations() const { return nvlink_; }
  [[nodiscard]] const std::map<int, NvswitchGeneration>& nvswitch_generations() const { return nvswitch_; }

  // Cross-references (a network's default switch, ...) must resolve; checked after loading.
  void check_references() const;

  // A calibration overlay (src/calib) replaces measured efficiencies with values fitted to the
  // user's own machine. Each is a global, physical fraction of a link's rate; an unknown
  // generation is an InputError at `where`.
  void set_pcie_copy_efficiency(int generation, double fraction, const SourceLocation& where = {});
  void set_nvlink_efficiency(int generation, double fraction, const SourceLocation& where = {});
  void set_host_staging_efficiency(double fraction) { host_staging_.efficiency = fraction; }
  void set_pageable_copy_efficiency(double fraction) { pageable_copy_.efficiency = fraction; }

private:
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, CpuSpec> cpus_;
  std::map<std::string, NicSpec> nics_;
  std::map<std::string, SwitchSpec> switches_;
  std::map<std::string, NetworkTech> networks_;
  std::map<std::string, StorageSpec> storage_;
  std::map<int, PcieGeneration> pcie_;
  std::map<int, NvlinkGeneration> nvlink_;
  std::map<int, NvswitchGeneration> nvswitch_;
  HostStaging host_staging_;
  HostStaging pageable_copy_;
  std::map<std::string, SourceLocation> origin_;  // "kind/name" -> where it was defined
};

}  // namespace gf::hw
