#pragma once
// The input pipeline of one server in steady state: storage read, CPU decode, host-to-device
// copy, GPU decode, GPU compute and device-to-host copy, for every GPU of the node at once.
// Copies and reads are flows on the node's device graph, run through the flow engine, so a
// PCIe switch, root port or socket's DRAM shared by several GPUs, a NIC and NVMe drives slows
// each of them as it would in the machine.
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "hw/catalog.hpp"
#include "topo/topology.hpp"
#include "work/input_workload.hpp"

namespace gf::work {

enum class DataSource { local_nvme, page_cache, network_fs };
inline constexpr EnumNames<DataSource, 3> kDataSourceNames{
    {{DataSource::local_nvme, "nvme"}, {DataSource::page_cache, "page-cache"}, {DataSource::network_fs, "network-fs"}}};
enum class DecodeOn { cpu, gpu };
inline constexpr EnumNames<DecodeOn, 2> kDecodeOnNames{{{DecodeOn::cpu, "cpu"}, {DecodeOn::gpu, "gpu"}}};
enum class HostBuffers { pinned, pageable };
inline constexpr EnumNames<HostBuffers, 2> kHostBuffersNames{
    {{HostBuffers::pinned, "pinned"}, {HostBuffers::pageable, "pageable"}}};

const char* to_string(DataSource s);
const char* to_string(DecodeOn d);
const char* to_string(HostBuffers b);

struct PipelineOptions {
  DataSource source = DataSource::local_nvme;
  DecodeOn decode = DecodeOn::cpu;
  HostBuffers buffers = HostBuffers::pinned;
  int prefetch = 2;        // batches in flight per GPU; 0 runs every stage in turn
  bool gds = false;        // GPUDirect Storage: NVMe straight into GPU memory
  int loader_cores = 0;    // cores for loading and decoding; 0 = all but one per GPU
  int batch = 0;           // per GPU; 0 = the workload's
  std::string network_fs;  // catalog storage of kind network-fs for --source network-fs
};

struct StageResult {
  std::string name;                 // "storage read", "CPU decode", "H2D copy", ...
  std::string resource;             // what does the work: "4x nvme-gen4", "120 cores", "PCIe Gen4 x16"
  double capacity = 0;              // samples/s per node with the stage running alone
  double loaded = 0;                // samples/s per node with every stage moving data at once
  double utilisation = 0;           // steady-state throughput / loaded capacity
  double bytes_per_sample = 0;      // for stages that move bytes
  std::optional<Bandwidth> rate;    // per GPU at `loaded`, for stages that move bytes
  std::optional<Bandwidth> steady;  // per GPU at the steady-state throughput
  std::optional<Bandwidth> alone;   // per GPU running alone
};

struct PipelineResult {
  std::vector<StageResult> stages;
  double samples_per_second = 0;  // per node, steady state
  double per_gpu = 0;
  std::string bottleneck;       // stage name
  std::string bottleneck_link;  // the busiest link of the copies, when a copy stage limits
  double gpu_idle = 0;          // fraction of time the GPUs wait for input
  double compute_capacity = 0;  // samples/s per node the GPUs could compute
  int loader_cores = 0;
  int gpus = 0;
  int batch = 0;
  bool overlapped = true;  // stages overlap (prefetch >= 1)
  [[nodiscard]] const StageResult* stage(const std::string& name) const;
};

// Models node 0 of `topology` (all nodes are alike). Impossible combinations (GDS without
// NVMe, network storage that is not network storage, ...) are InputErrors.
PipelineResult model_pipeline(const topo::Topology& topology, const hw::Catalog& catalog, const InputWorkload& w,
                              const PipelineOptions& o);

}  // namespace gf::work
