#include "probe/sysfs.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include "probe/catalog_match.hpp"

namespace gf::probe::sysfs {

namespace fs = std::filesystem;

namespace {

// The first line of a sysfs attribute, trimmed; empty if unreadable (many attributes fail to
// read with EINVAL when the link is down, which means "unknown", not an error).
std::string attr(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

double leading_number(const std::string& s, bool* ok = nullptr) {
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
  if (ok) *ok = ec == std::errc() && p != s.data() + i;
  return ec == std::errc() ? v : 0.0;
}

unsigned hex_attr(const fs::path& p) {
  std::string s = attr(p);
  if (s.rfind("0x", 0) == 0) s = s.substr(2);
  unsigned v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

// PCI_SLOT_NAME from DEV/uevent: works both on a real device link and in a fake tree.
std::string pci_address(const fs::path& device_dir) {
  std::ifstream in(device_dir / "uevent");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PCI_SLOT_NAME=", 0) == 0) return line.substr(14);
  }
  std::error_code ec;
  const auto target = fs::canonical(device_dir, ec);
  return ec ? std::string() : target.filename().string();
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

void fill_pci(NicInfo& nic, const fs::path& device_dir) {
  nic.pci_address = pci_address(device_dir);
  nic.vendor_id = hex_attr(device_dir / "vendor");
  nic.device_id = hex_attr(device_dir / "device");
  nic.model = nic_model_for_pci(nic.vendor_id, nic.device_id);
  nic.pcie = pcie_link(device_dir);
}

}  // namespace

int parse_link_speed(const std::string& text) {
  bool ok = false;
  const double gtps = leading_number(text, &ok);
  return ok ? pcie_generation_from_gtps(gtps) : 0;
}

std::optional<Bandwidth> parse_ib_rate(const std::string& text) {
  bool ok = false;
  const double gbps = leading_number(text, &ok);
  if (!ok || gbps <= 0) return std::nullopt;
  return gigabits_per_second(gbps);
}

PcieState pcie_link(const std::string& device_dir) {
  const fs::path d(device_dir);
  PcieState s;
  s.generation = parse_link_speed(attr(d / "current_link_speed"));
  s.max_generation = parse_link_speed(attr(d / "max_link_speed"));
  s.width = static_cast<int>(leading_number(attr(d / "current_link_width")));
  s.max_width = static_cast<int>(leading_number(attr(d / "max_link_width")));
  return s;
}

std::vector<NicInfo> net_interfaces(const std::string& root) {
  std::vector<NicInfo> out;
  for (const auto& dir : sorted_entries(fs::path(root) / "sys/class/net")) {
    std::error_code ec;
    if (!fs::exists(dir / "device", ec)) continue;  // virtual: lo, bridges, ifb, veth
    NicInfo nic;
    nic.name = dir.filename().string();
    nic.kind = "ethernet";
    if (attr(dir / "type") == "32") nic.kind = "ipoib";  // ARPHRD_INFINIBAND: the IB port reports it
    bool ok = false;
    const double mbps = leading_number(attr(dir / "speed"), &ok);
    if (ok && mbps > 0) nic.speed = gigabits_per_second(mbps / 1000.0);
    nic.state = attr(dir / "operstate");
    fill_pci(nic, dir / "device");
    out.push_back(nic);
  }
  return out;
}

std::vector<NicInfo> infiniband_ports(const std::string& root) {
  std::vector<NicInfo> out;
  for (const auto& dev : sorted_entries(fs::path(root) / "sys/class/infiniband")) {
    for (const auto& port : sorted_entries(dev / "ports")) {
      NicInfo nic;
      nic.name = dev.filename().string() + "/" + port.filename().string();
      const std::string layer = attr(port / "link_layer");
      nic.kind = layer == "Ethernet" ? "roce" : "infiniband";
      nic.speed = parse_ib_rate(attr(port / "rate"));
      // "4: ACTIVE" -> "ACTIVE"
      std::string state = attr(port / "state");
      if (const auto colon = state.find(": "); colon != std::string::npos) state = state.substr(colon + 2);
      nic.state = state;
      fill_pci(nic, dev / "device");
      out.push_back(nic);
    }
  }
  return out;
}

std::vector<GpuInfo> nvidia_gpus(const std::string& root) {
  std::vector<GpuInfo> out;
  for (const auto& dev : sorted_entries(fs::path(root) / "sys/bus/pci/devices")) {
    if (hex_attr(dev / "vendor") != 0x10de) continue;
    const unsigned cls = hex_attr(dev / "class") >> 8;  // 0x030200 -> 0x0302
    if (cls != 0x0300 && cls != 0x0302) continue;       // VGA or 3D controller; skips NVSwitch bridges
    GpuInfo g;
    g.index = static_cast<int>(out.size());
    g.pci_address = pci_address(dev);
    const unsigned id = hex_attr(dev / "device");
    g.name = nvidia_gpu_name_for_pci(id);
    if (g.name.empty()) g.name = fmt::format("NVIDIA PCI device {:04x}", id);
    g.pcie = pcie_link(dev.string());
    out.push_back(g);
  }
  return out;
}

std::string cpu_model(const std::string& root) {
  std::ifstream in(fs::path(root) / "proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(' '));
      return v;
    }
  }
  return {};
}

namespace {
Bytes meminfo(const std::string& root, const std::string& key) {
  std::ifstream in(fs::path(root) / "proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return Bytes(leading_number(line.substr(key.size())) * 1024.0);  // kB
  }
  return Bytes(0);
}
}  // namespace

Bytes memory_available(const std::string& root) { return meminfo(root, "MemAvailable:"); }
Bytes memory_total(const std::string& root) { return meminfo(root, "MemTotal:"); }

}  // namespace gf::probe::sysfs
