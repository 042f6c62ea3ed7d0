#include "probe/catalog_match.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

namespace gf::probe {

namespace {

std::set<std::string> tokens(const std::string& s) {
  std::set<std::string> out;
  std::string cur;
  for (const char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!cur.empty()) {
      out.insert(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.insert(cur);
  return out;
}

std::string alnum_lower(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

struct GpuRule {
  std::vector<std::string> all;   // every token present
  std::vector<std::string> none;  // no token present
  const char* model;
};

// Most specific first. Names as NVML reports them: "Tesla V100-SXM2-32GB", "NVIDIA A100-SXM4-80GB",
// "NVIDIA A100 80GB PCIe", "NVIDIA H100 80GB HBM3" (SXM5), "NVIDIA H100 PCIe", "NVIDIA H100 NVL",
// "NVIDIA H200", "NVIDIA B200", "NVIDIA L40S", "NVIDIA GeForce RTX 4090".
const std::vector<GpuRule>& gpu_rules() {
  static const std::vector<GpuRule> rules = {
      {{"v100", "sxm2", "32gb"}, {}, "v100-sxm2-32gb"},
      {{"a100", "sxm4", "40gb"}, {}, "a100-sxm4-40gb"},
      {{"a100", "sxm4", "80gb"}, {}, "a100-sxm4-80gb"},
      {{"a100", "80gb", "pcie"}, {}, "a100-pcie-80gb"},
      {{"h100", "nvl"}, {}, "h100-nvl"},
      {{"h100", "pcie"}, {}, "h100-pcie"},
      {{"h100", "hbm3"}, {"pcie", "nvl"}, "h100-sxm5"},
      {{"h100", "sxm5"}, {}, "h100-sxm5"},
      {{"h200"}, {"nvl", "pcie"}, "h200-sxm"},
      {{"b200"}, {}, "b200"},
      {{"l40s"}, {}, "l40s"},
      {{"l4"}, {}, "l4"},
      {{"a10"}, {}, "a10"},
      {{"rtx", "4090"}, {"d"}, "rtx-4090"},
      {{"rtx", "3090"}, {"ti"}, "rtx-3090"},
      {{"rtx", "2080", "ti"}, {}, "rtx-2080ti"},
      {{"mi300x"}, {}, "mi300x"},
  };
  return rules;
}

struct NicId {
  unsigned vendor;
  unsigned device;
  const char* model;
};

// pci.ids (2023-04-11): 15b3:1017 ConnectX-5, 15b3:1019 ConnectX-5 Ex, 15b3:101b ConnectX-6,
// 15b3:1021 ConnectX-7, 15b3:1023 ConnectX-8, 15b3:a2dc BlueField-3 integrated ConnectX-7,
// 1d0f:efa0/efa1 Elastic Fabric Adapter, 8086:1572/1581/1583..1589 X710, 8086:1521 I350,
// 14e4:16d7 BCM57414. ConnectX-6 Dx/Lx (101d/101f) are Ethernet-only parts with other speeds,
// so they are deliberately not mapped to the 200 Gb/s ConnectX-6 VPI entry.
constexpr NicId kNicIds[] = {
    {0x15b3, 0x1017, "connectx-5"}, {0x15b3, 0x1019, "connectx-5"}, {0x15b3, 0x101b, "connectx-6"},
    {0x15b3, 0x1021, "connectx-7"}, {0x15b3, 0x1023, "connectx-8"}, {0x15b3, 0xa2dc, "bluefield-3"},
    {0x1d0f, 0xefa0, "efa-v1"},     {0x1d0f, 0xefa1, "efa-v2"},     {0x8086, 0x1572, "intel-x710"},
    {0x8086, 0x1581, "intel-x710"}, {0x8086, 0x1585, "intel-x710"}, {0x8086, 0x1586, "intel-x710"},
    {0x8086, 0x1589, "intel-x710"}, {0x8086, 0x1521, "intel-i350"}, {0x14e4, 0x16d7, "broadcom-57414"},
};

struct GpuId {
  unsigned device;
  const char* name;
};

// pci.ids (2023-04-11), vendor 10de. H200, B200 and L40S IDs are not in that release.
constexpr GpuId kGpuIds[] = {
    {0x1db5, "Tesla V100 SXM2 32GB"},
    {0x20b0, "A100 SXM4 40GB"},
    {0x20b2, "A100 SXM4 80GB"},
    {0x20b5, "A100 PCIe 80GB"},
    {0x2330, "H100 SXM5 80GB"},
    {0x2331, "H100 PCIe"},
    {0x2236, "A10"},
    {0x27b8, "L4"},
    {0x2684, "GeForce RTX 4090"},
    {0x2204, "GeForce RTX 3090"},
    {0x1e04, "GeForce RTX 2080 Ti"},
    {0x1e07, "GeForce RTX 2080 Ti Rev. A"},
};

}  // namespace

std::string nvidia_gpu_name_for_pci(unsigned device) {
  for (const auto& g : kGpuIds) {
    if (g.device == device) return std::string("NVIDIA ") + g.name;
  }
  return {};
}

std::string gpu_model_for_name(const std::string& name) {
  const auto t = tokens(name);
  for (const auto& r : gpu_rules()) {
    const bool all = std::all_of(r.all.begin(), r.all.end(), [&](const auto& k) { return t.count(k) > 0; });
    const bool none = std::none_of(r.none.begin(), r.none.end(), [&](const auto& k) { return t.count(k) > 0; });
    if (all && none) return r.model;
  }
  return {};
}

std::string nic_model_for_pci(unsigned vendor, unsigned device) {
  for (const auto& n : kNicIds) {
    if (n.vendor == vendor && n.device == device) return n.model;
  }
  return {};
}

std::string cpu_model_for_name(const std::string& model, const hw::Catalog& catalog) {
  const std::string haystack = alnum_lower(model);
  std::string best;
  std::size_t best_len = 0;
  for (const auto& [name, cpu] : catalog.cpus()) {
    // The catalog name without its family prefix is the model number: xeon-8480c -> 8480c,
    // xeon-e5-2698v4 -> e52698v4, epyc-7742 -> 7742.
    const auto dash = name.find('-');
    const std::string key = alnum_lower(dash == std::string::npos ? name : name.substr(dash + 1));
    if (key.size() >= 4 && haystack.find(key) != std::string::npos && key.size() > best_len) {
      best = name;
      best_len = key.size();
    }
  }
  return best;
}

}  // namespace gf::probe
