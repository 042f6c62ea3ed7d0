#pragma once
// Readers for the Linux sysfs and procfs files that describe NICs, PCIe links and GPUs. Each
// takes the file-system root ("/" on a real machine) so the tests can point it at a fake tree.
#include <string>
#include <vector>

#include "probe/profile.hpp"

namespace gf::probe::sysfs {

// Network interfaces backed by a device (lo, bridges and ifb are skipped), with the link speed
// from /sys/class/net/IF/speed (Mb/s; absent while the link is down).
std::vector<NicInfo> net_interfaces(const std::string& root);

// InfiniBand (and RoCE) ports: /sys/class/infiniband/DEV/ports/N/rate, e.g. "400 Gb/sec (4X NDR)".
std::vector<NicInfo> infiniband_ports(const std::string& root);

// The PCIe link of one PCI device directory (current_link_speed, max_link_width, ...).
PcieState pcie_link(const std::string& device_dir);

// NVIDIA display and 3D controllers on the PCI bus, when NVML is not there to ask.
std::vector<GpuInfo> nvidia_gpus(const std::string& root);

// "model name" of the first processor in /proc/cpuinfo; empty if absent.
std::string cpu_model(const std::string& root);

// MemAvailable and MemTotal from /proc/meminfo; 0 if unreadable.
Bytes memory_available(const std::string& root);
Bytes memory_total(const std::string& root);

// "8.0 GT/s PCIe" -> 3; "Unknown" -> 0.
int parse_link_speed(const std::string& text);
// "400 Gb/sec (4X NDR)" -> 400 Gb/s; nullopt if no leading number.
std::optional<Bandwidth> parse_ib_rate(const std::string& text);

}  // namespace gf::probe::sysfs
