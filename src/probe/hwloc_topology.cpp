#include "probe/hwloc_topology.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <algorithm>
#include <stdexcept>

namespace gf::probe {

HwlocTopology::HwlocTopology() {
  if (hwloc_topology_init(&topo_) != 0) throw std::runtime_error("hwloc_topology_init failed");
  // Keep PCI devices that matter (GPUs, NICs, storage) and their OS devices, not every bridge.
  hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo_) != 0) {
    hwloc_topology_destroy(topo_);
    topo_ = nullptr;
    throw std::runtime_error("hwloc_topology_load failed");
  }
}

HwlocTopology::~HwlocTopology() {
  if (topo_) hwloc_topology_destroy(topo_);
}

int HwlocTopology::packages() const { return std::max(1, hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PACKAGE)); }
int HwlocTopology::cores() const { return hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE); }
int HwlocTopology::threads() const { return hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_PU); }

Bytes HwlocTopology::memory() const {
  const hwloc_obj_t root = hwloc_get_root_obj(topo_);
  return Bytes(static_cast<double>(root->total_memory));
}

std::string HwlocTopology::cpu_model() const {
  const hwloc_obj_t pkg = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_PACKAGE, 0);
  if (!pkg) return {};
  const char* model = hwloc_obj_get_info_by_name(pkg, "CPUModel");
  return model ? model : "";
}

std::vector<NumaNodeInfo> HwlocTopology::numa_nodes() const {
  std::vector<NumaNodeInfo> out;
  const int n = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    const hwloc_obj_t node = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    NumaNodeInfo info;
    info.os_index = static_cast<int>(node->os_index);
    info.memory = Bytes(static_cast<double>(node->attr->numanode.local_memory));
    info.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo_, node->cpuset, HWLOC_OBJ_CORE);
    out.push_back(info);
  }
  return out;
}

std::vector<PciDeviceInfo> HwlocTopology::pci_devices() const {
  std::vector<PciDeviceInfo> out;
  for (hwloc_obj_t obj = hwloc_get_next_pcidev(topo_, nullptr); obj; obj = hwloc_get_next_pcidev(topo_, obj)) {
    const auto& a = obj->attr->pcidev;
    PciDeviceInfo d;
    d.address = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
    d.vendor_id = a.vendor_id;
    d.device_id = a.device_id;
    d.class_id = a.class_id;
    const char* vendor = hwloc_obj_get_info_by_name(obj, "PCIVendor");
    const char* device = hwloc_obj_get_info_by_name(obj, "PCIDevice");
    if (vendor || device) d.name = fmt::format("{} {}", vendor ? vendor : "", device ? device : "");
    // hwloc reports 0 when the kernel does not expose the link (virtual machines often do not).
    if (a.linkspeed > 0) d.link = gigabytes_per_second(a.linkspeed);
    for (hwloc_obj_t child = obj->io_first_child; child; child = child->next_sibling) {
      if (child->type == HWLOC_OBJ_OS_DEVICE && child->name) d.os_devices.emplace_back(child->name);
    }
    out.push_back(d);
  }
  return out;
}

}  // namespace gf::probe
