#pragma once
// A machine profile: what `gpufabric probe` discovered and measured on one machine. It is saved
// to JSON, loaded back for --compare, and fed to the expectation functions. Every figure here
// was measured or read from the machine; a part that was not measured is absent, not zero.
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace gf::probe {

// Decoded images per second. A rate of its own kind, so it cannot be mixed with a bandwidth.
struct ImageRateTag {};
using ImageRate = Quantity<ImageRateTag>;

inline constexpr int kProfileSchemaVersion = 1;

// A PCIe link as trained now and at most; 0 means the source did not say.
struct PcieState {
  int generation = 0;
  int width = 0;
  int max_generation = 0;
  int max_width = 0;
};

struct NumaNodeInfo {
  int os_index = 0;
  Bytes memory;
  int cores = 0;
};

struct PciDeviceInfo {
  std::string address;  // domain:bus:device.function, e.g. 0000:17:00.0
  unsigned vendor_id = 0;
  unsigned device_id = 0;
  unsigned class_id = 0;                // PCI class and subclass, e.g. 0x0302 for a 3D controller
  std::string name;                     // vendor/device name when the source knows it
  std::optional<Bandwidth> link;        // hwloc's link bandwidth (per direction, after encoding)
  std::vector<std::string> os_devices;  // eth0, mlx5_0, nvme0n1, ...
};

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string pci_address;
  PcieState pcie;
  bool pcie_under_load = false;  // the current link was read while copies ran (idle GPUs downtrain)
  int nvlinks_active = -1;       // -1: unknown (no NVML or not supported)
};

struct NicInfo {
  std::string name;  // eth0, or mlx5_0/1 for an InfiniBand port
  std::string kind;  // ethernet | infiniband
  std::optional<Bandwidth> speed;
  std::string state;  // operstate or InfiniBand port state
  std::string pci_address;
  unsigned vendor_id = 0;
  unsigned device_id = 0;
  std::string model;  // catalog NIC name when the PCI ID is known, else empty
  PcieState pcie;
};

struct Discovery {
  std::string hostname;
  std::string cpu_model;
  int packages = 0;
  int cores = 0;
  int threads = 0;
  Bytes memory;
  std::vector<NumaNodeInfo> numa_nodes;
  std::vector<PciDeviceInfo> pci_devices;
  std::vector<GpuInfo> gpus;
  std::vector<NicInfo> nics;
  std::string gpu_source;  // nvml | sysfs | none
  std::vector<std::string> notes;
};

struct MemoryResult {
  int numa_node = -1;  // -1: the whole machine
  int threads = 0;
  Bytes array_size;  // each of the three arrays
  Bytes llc;         // last-level cache of the domain; STREAM wants arrays of at least 4x this
  int repetitions = 0;
  Bandwidth copy;   // best repetition, 2 arrays counted as STREAM does
  Bandwidth triad;  // best repetition, 3 arrays counted
};

struct StorageResult {
  std::string directory;
  std::string filesystem;
  Bytes file_size;
  Bytes block;
  bool direct_io = false;
  Bandwidth write;  // write + fsync
  Bandwidth read;
  std::string note;
};

struct DecodeResult {
  int width = 0;
  int height = 0;
  int quality = 0;
  Bytes jpeg_size;
  int threads = 0;
  ImageRate jpeg_per_core;
  ImageRate jpeg_all_cores;
  Bandwidth inflate_per_core;  // decompressed bytes per second
  Bandwidth inflate_all_cores;
  double deflate_ratio = 0;  // uncompressed / compressed size of the inflate input
};

struct CopyPoint {
  Bytes size;
  Bandwidth bandwidth;
};

struct CopyCurve {
  int gpu = 0;  // index in Discovery::gpus when matched by PCI address, else CUDA's
  std::string pci_address;
  std::string direction;  // h2d | d2h | d2d
  std::string memory;     // pinned | pageable | device
  std::vector<CopyPoint> points;
};

struct PeerCopy {
  int src = 0;
  int dst = 0;
  bool peer_access = false;  // false: the driver staged the copy through the host
  Bandwidth bandwidth;
};

struct CollectiveResult {
  std::string op;       // all_reduce
  std::string library;  // nccl | mpi
  int ranks = 0;
  Bytes size;
  Seconds time;
  Bandwidth algbw;
  Bandwidth busbw;
};

// A dense matrix multiply (cuBLAS, C = A x B with m x k and k x n operands) on one GPU: what
// `train --compute-profile` puts in place of the published GEMM ceiling.
struct GemmMeasurement {
  int gpu = 0;
  std::string precision;  // bf16 | fp16 | tf32
  long m = 0, n = 0, k = 0;
  double tflops = 0;  // 2 m n k / time, 1e12 per second
};

struct GpuResults {
  std::vector<CopyCurve> copies;
  std::vector<GemmMeasurement> gemms;
  std::vector<PeerCopy> peers;
  std::optional<CollectiveResult> nccl;
  std::vector<std::string> notes;
};

struct PairResult {
  int rank_a = 0;
  int rank_b = 0;
  std::string host_a;
  std::string host_b;
  Bytes size;
  Bandwidth bandwidth;  // one direction, from ping-pong half round trips
  Seconds latency;      // half the 8-byte round trip
};

struct MpiResults {
  int ranks = 0;
  int hosts = 0;
  std::string library;
  std::vector<PairResult> pairs;
  std::optional<CollectiveResult> allreduce;
  std::optional<CollectiveResult> nccl;
  std::vector<std::string> notes;
};

struct Profile {
  int schema_version = kProfileSchemaVersion;
  std::string gpufabric_version;
  std::string measured_at;  // UTC, ISO 8601
  bool quick = false;
  Discovery discovery;
  std::vector<MemoryResult> memory;
  std::optional<StorageResult> storage;
  std::optional<DecodeResult> decode;
  std::optional<GpuResults> gpu;
  std::optional<MpiResults> mpi;
};

// PCIe generation from a transfer rate in GT/s (2.5 -> 1, ..., 64 -> 6); 0 if not a PCIe rate.
int pcie_generation_from_gtps(double gtps);

}  // namespace gf::probe
