// Catalog lookups and cross-reference checks.
#include "hw/catalog.hpp"

#include <vector>

namespace gf::hw {

namespace {

template <typename Map>
std::vector<std::string> names_of(const Map& m) {
  std::vector<std::string> out;
  for (const auto& kv : m) {
    if constexpr (std::is_same_v<typename Map::key_type, int>) {
      out.push_back(std::to_string(kv.first));
    } else {
      out.push_back(kv.first);
    }
  }
  return out;
}

template <typename Map>
const typename Map::mapped_type& find_named(const Map& m, const std::string& name, const char* kind,
                                            const SourceLocation& where, const std::string& field) {
  const auto it = m.find(name);
  if (it != m.end()) return it->second;
  const auto names = names_of(m);
  const std::string hint = suggest(name, names);
  throw InputError(
      where, field,
      std::string("unknown ") + kind + " '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
      join(names));
}

template <typename Map>
const typename Map::mapped_type& find_generation(const Map& m, int gen, const char* kind, const SourceLocation& where,
                                                 const std::string& field) {
  const auto it = m.find(gen);
  if (it != m.end()) return it->second;
  throw InputError(where, field, std::string("no ") + kind + " generation " + std::to_string(gen) + " in the catalog",
                   join(names_of(m)));
}

}  // namespace

const GpuSpec& Catalog::gpu(const std::string& n, const SourceLocation& w, const std::string& f) const {
  return find_named(gpus_, n, "GPU model", w, f);
}
const CpuSpec& Catalog::cpu(const std::string& n, const SourceLocation& w, const std::string& f) const {
  return find_named(cpus_, n, "CPU model", w, f);
}
const NicSpec& Catalog::nic(const std::string& n, const SourceLocation& w, const std::string& f) const {
  return find_named(nics_, n, "NIC model", w, f);
}
const SwitchSpec& Catalog::network_switch(const std::string& n, const SourceLocation& w, const std::string& f) const {
  return find_named(switches_, n, "switch model", w, f);
}
const NetworkTech& Catalog::network(const std::string& n, const SourceLocation& w, const std::string& f) const {
  return find_named(networks_, n, "network technology", w, f);
}
const StorageSpec& Catalog::storage(const std::string& n, const SourceLocation& w, const std::string& f) const {
  return find_named(storage_, n, "storage model", w, f);
}
const PcieGeneration& Catalog::pcie(int g, const SourceLocation& w, const std::string& f) const {
  return find_generation(pcie_, g, "PCIe", w, f);
}
const NvlinkGeneration& Catalog::nvlink(int g, const SourceLocation& w, const std::string& f) const {
  return find_generation(nvlink_, g, "NVLink", w, f);
}
const NvswitchGeneration& Catalog::nvswitch(int g, const SourceLocation& w, const std::string& f) const {
  return find_generation(nvswitch_, g, "NVSwitch", w, f);
}

void Catalog::set_pcie_copy_efficiency(int g, double fraction, const SourceLocation& where) {
  (void)pcie(g, where, "pcie_generation");
  pcie_.at(g).copy_efficiency = fraction;
}

void Catalog::set_nvlink_efficiency(int g, double fraction, const SourceLocation& where) {
  (void)nvlink(g, where, "nvlink_generation");
  nvlink_.at(g).efficiency = fraction;
}

void Catalog::check_references() const {
  auto at = [&](const std::string& key) {
    const auto it = origin_.find(key);
    return it == origin_.end() ? SourceLocation{} : it->second;
  };
  for (const auto& [name, net] : networks_) {
    network_switch(net.default_switch, at("networks/" + name), "networks[" + name + "].default_switch");
    nic(net.default_nic, at("networks/" + name), "networks[" + name + "].default_nic");
  }
  for (const auto& [name, g] : gpus_) {
    pcie(g.pcie.generation, at("gpus/" + name), "gpus[" + name + "].pcie.generation");
    if (g.nvlink && g.nvlink->generation > 0) {
      nvlink(g.nvlink->generation, at("gpus/" + name), "gpus[" + name + "].nvlink.generation");
    }
  }
  for (const auto& [gen, sw] : nvswitch_) {
    nvlink(sw.nvlink_generation, at("nvswitch/gen" + std::to_string(gen)),
           "nvswitch[gen " + std::to_string(gen) + "].nvlink_generation");
  }
}

}  // namespace gf::hw
