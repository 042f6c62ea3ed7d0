#include "probe/runner.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "probe/cuda_probe.hpp"
#include "probe/decode.hpp"
#include "probe/discovery.hpp"
#include "probe/hwloc_topology.hpp"
#include "probe/memory_bandwidth.hpp"
#include "probe/mpi_probe.hpp"
#include "probe/nvml.hpp"
#include "probe/storage.hpp"

#ifndef GPUFABRIC_VERSION
#define GPUFABRIC_VERSION "unknown"
#endif

namespace gf::probe {

namespace {

constexpr double kMiB = 1048576.0;

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool wants(const RunOptions& o, const char* part) { return o.parts.empty() || o.parts.count(part) > 0; }

Profile start(const RunOptions& options, const HwlocTopology& topology, std::unique_ptr<Nvml>& nvml) {
  Profile p;
  p.gpufabric_version = GPUFABRIC_VERSION;
  p.measured_at = utc_now();
  p.quick = options.quick;
  p.discovery = discover(topology, options.root, nvml);
  return p;
}

}  // namespace

const std::set<std::string>& part_names() {
  static const std::set<std::string> names = {"memory", "storage", "decode", "gpu"};
  return names;
}

Profile run_probe(const RunOptions& options) {
  const HwlocTopology topology;
  std::unique_ptr<Nvml> nvml;
  Profile p = start(options, topology, nvml);

  if (wants(options, "memory")) {
    MemoryOptions m;
    m.threads = options.threads;
    // Quick: 6 rounds (5 counted) on full-size arrays; the arrays' size is what keeps the figure
    // honest, so it is not cut.
    m.repetitions = options.quick ? 6 : 10;
    p.memory = measure_memory(m, topology);
  }
  if (wants(options, "storage")) {
    StorageOptions s;
    s.directory = options.directory;
    s.file_size = Bytes((options.quick ? 64 : 256) * kMiB);
    p.storage = measure_storage(s);
  }
  if (wants(options, "decode")) {
    DecodeOptions d;
    d.threads = options.threads;
    d.duration = seconds(options.quick ? 0.5 : 2.0);
    p.decode = measure_decode(d);
  }
  if (wants(options, "gpu")) {
    GpuProbeOptions g;
    g.quick = options.quick;
    if (nvml) {
      g.during_load = [&](const std::string& address) {
        for (auto& gpu : p.discovery.gpus) {
          if (gpu.pci_address != address) continue;
          std::vector<GpuInfo> one{gpu};
          nvml->refresh_links(one);
          gpu.pcie = one.front().pcie;
          gpu.pcie_under_load = true;
        }
      };
    }
    p.gpu = measure_gpus(g);
    // CUDA and NVML number GPUs differently (CUDA puts the fastest first): match by PCI address.
    for (auto& c : p.gpu->copies) {
      for (const auto& gpu : p.discovery.gpus) {
        if (!c.pci_address.empty() && gpu.pci_address == c.pci_address) c.gpu = gpu.index;
      }
    }
  }
  return p;
}

std::optional<Profile> run_mpi_probe(const RunOptions& options) {
  if (!mpi_built()) (void)measure_mpi({});  // throws the "built without MPI" InputError
  const HwlocTopology topology;
  std::unique_ptr<Nvml> nvml;
  Profile p = start(options, topology, nvml);
  MpiOptions m;
  m.quick = options.quick;
  auto results = measure_mpi(m);
  if (!results) return std::nullopt;
  p.mpi = std::move(*results);
  return p;
}

}  // namespace gf::probe
