#pragma once
// Prices and power of what a cluster is built from (data/prices/prices.yaml): GPUs, the server
// around them, NICs, switches, optics, storage, racks, electricity and cloud GPU-hours. Every
// entry carries a source and a date; a plan's `prices:` section overrides any of them, and the
// override is marked as the plan's own in the output.
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace gf::plan {

struct Price {
  double usd = 0;
  double power_w = 0;  // 0: not given
  std::string date;
  std::string source;
  std::string note;
  bool estimate = false;
};

struct PriceCatalog {
  std::map<std::string, Price> gpus;      // by catalog GPU name
  std::map<std::string, Price> servers;   // by form: nvswitch, nvlink-mesh, pcie, workstation
  std::map<std::string, Price> nics;      // by catalog NIC name
  std::map<std::string, Price> switches;  // by catalog switch name
  std::map<int, Price> optics;            // by Gb/s: one end of a link
  std::map<std::string, Price> storage;   // usd per TB by kind: nvme, parallel-fs
  Price rack;                             // usd per rack; power_w: usable power per rack
  Price electricity;                      // usd: per kWh
  double pue = 1.5;
  std::map<std::string, Price> cloud;  // usd per GPU-hour by GPU name
  Price lifetime;                      // usd: years of depreciation
  Price utilisation;                   // usd: average power as a fraction of the maximum

  // Look-ups that name the missing entry and the plan key that would supply it.
  [[nodiscard]] const Price& gpu(const std::string& name) const;
  [[nodiscard]] const Price& server(const std::string& form) const;
  [[nodiscard]] const Price& nic(const std::string& name) const;
  [[nodiscard]] const Price& network_switch(const std::string& name) const;
  // The optics for one end of a link of `gbps`: the entry at that speed, else the next faster.
  [[nodiscard]] const Price& optic(double gbps) const;
  [[nodiscard]] const Price& cloud_gpu(const std::string& name) const;
};

PriceCatalog parse_prices(const std::string& text, const std::string& file);
PriceCatalog builtin_prices();
// Applies a plan's `prices:` mapping (same sections; an entry's fields replace the catalog's,
// and its source becomes the plan file unless it names one).
void apply_price_overrides(PriceCatalog& c, const YAML::Node& overrides, const std::string& file);

}  // namespace gf::plan
