#include "probe/discovery.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cmath>

#include "probe/hwloc_topology.hpp"
#include "probe/nvml.hpp"
#include "probe/sysfs.hpp"

namespace gf::probe {

Discovery discover(const HwlocTopology& topology, const std::string& root, std::unique_ptr<Nvml>& nvml) {
  Discovery d;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) d.hostname = host;
  d.cpu_model = topology.cpu_model();
  if (d.cpu_model.empty()) d.cpu_model = sysfs::cpu_model(root);
  d.packages = topology.packages();
  d.cores = topology.cores();
  d.threads = topology.threads();
  d.numa_nodes = topology.numa_nodes();
  d.pci_devices = topology.pci_devices();
  // The kernel's total, which is what the probe can use; hwloc's NUMA figures can disagree in
  // virtual machines (seen here: 5.3 GB on node 0 of a 23 GiB guest), so say so when they do.
  d.memory = sysfs::memory_total(root);
  double numa_total = 0;
  for (const auto& n : d.numa_nodes) numa_total += n.memory.value();
  if (d.memory.value() > 0 && numa_total > 0 && std::abs(numa_total / d.memory.value() - 1) > 0.1) {
    d.notes.push_back(fmt::format("hwloc NUMA nodes hold {:.1f} GB but the kernel reports {:.1f} GB (virtual machine?)",
                                  numa_total / 1e9, d.memory.value() / 1e9));
  }

  std::string why;
  nvml = Nvml::open(why);
  if (nvml) {
    d.gpus = nvml->gpus();
    d.gpu_source = "nvml";
  } else {
    d.notes.push_back(why);
    d.gpus = sysfs::nvidia_gpus(root);
    d.gpu_source = d.gpus.empty() ? "none" : "sysfs";
  }
  d.nics = sysfs::infiniband_ports(root);
  for (auto& n : sysfs::net_interfaces(root)) d.nics.push_back(std::move(n));
  return d;
}

}  // namespace gf::probe
