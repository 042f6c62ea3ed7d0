#pragma once
// A cluster description as read from YAML (docs/cluster-format.md), before it is built into a
// graph. Each element remembers where it was written so that build-time checks (a missing
// parent, a cycle) can point at the line.
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace gf::topo {

enum class GpuFabric { nvswitch, nvlink_mesh, pcie };
inline constexpr EnumNames<GpuFabric, 3> kGpuFabricNames{
    {{GpuFabric::nvswitch, "nvswitch"}, {GpuFabric::nvlink_mesh, "nvlink-mesh"}, {GpuFabric::pcie, "pcie"}}};

enum class FabricKind { single, fat_tree, rail };
inline constexpr EnumNames<FabricKind, 3> kFabricKindNames{
    {{FabricKind::single, "single"}, {FabricKind::fat_tree, "fat-tree"}, {FabricKind::rail, "rail"}}};

const char* to_string(GpuFabric f);
const char* to_string(FabricKind f);

struct PcieSwitchSpec {
  std::string name;
  std::string parent;
  int generation = 0;
  int lanes = 16;
  std::optional<int> host_bridge;
  SourceLocation where;
};

// Where a setting came from: a command-line flag (where.file empty, field "--tiers") or a
// field of a cluster file (field "network.tiers" at where). Errors found later, when the setting
// is used, name it the way the user wrote it.
struct Origin {
  SourceLocation where;
  std::string field;
};

inline Origin flag_origin(std::string flag) {
  Origin o;
  o.field = std::move(flag);
  return o;
}

struct Attachment {  // a GPU, NIC or storage device's place in the PCIe tree
  std::string parent;
  std::optional<int> host_bridge;
  // The link as it trained: a device in an x8 slot (or downtrained to x4, or to an older
  // generation) runs at the lower of its own and these. Unset: the device's own link.
  std::optional<int> lanes;
  std::optional<int> generation;
  SourceLocation where;
};

// `count` identical NICs or storage devices of a catalog model under one parent.
struct DevicePlacement {
  std::string model;
  Attachment at;
  int count = 1;
};

struct NvlinkEdge {
  int a = 0;
  int b = 0;
  int links = 1;
  SourceLocation where;
};

struct NodeDesign {
  std::string gpu;
  SourceLocation gpu_where;
  int gpus = 0;
  std::string cpu;
  SourceLocation cpu_where;
  int sockets = 1;
  Bytes host_memory;
  GpuFabric gpu_fabric = GpuFabric::pcie;
  int nvswitch_generation = 0;
  int nvswitch_count = 0;
  SourceLocation nvswitch_where;
  std::vector<NvlinkEdge> nvlink_mesh;
  std::vector<PcieSwitchSpec> pcie_switches;
  std::vector<Attachment> gpu_parents;  // one per GPU
  std::vector<DevicePlacement> nics;
  std::vector<DevicePlacement> storage;
};

struct NetworkDesign {
  std::string tech;
  SourceLocation tech_where;
  // The fabric, when a file or flag chose one (fabric_from.field is then set). Otherwise the
  // topology picks a single switch when the NIC ports fit, else the smallest non-blocking
  // fat-tree that holds them, and writes its choice back here.
  FabricKind fabric = FabricKind::single;
  Origin fabric_from;
  int tiers = 0;  // 0: the fewest tiers that hold the nodes
  Origin tiers_from;
  double oversubscription = 1.0;
  Origin oversubscription_from;
  std::string switch_model;  // empty: the network's default
  SourceLocation switch_where;
};

struct ClusterSpec {
  std::string name;
  std::string description;
  std::string source;
  std::string file;
  long nodes = 1;
  Origin nodes_from = flag_origin("--nodes");
  bool gpudirect = true;
  bool p2p = true;
  // The GPUs' driver allows peer-to-peer although the stock driver refuses it for this GPU
  // (GeForce with a patched kernel module): without it, p2p: true cannot enable PCIe P2P there.
  bool p2p_patched_driver = false;
  NodeDesign node;
  NetworkDesign network;
  // What the overrides and defaults did that the user may not expect (a NIC swapped for the
  // one a network implies, a count kept, a fabric chosen), one sentence each, for the output's
  // header. Warnings start with "warning: ".
  std::vector<std::string> notes;
};

// Command-line overrides, applied on top of a description.
struct ClusterOverrides {
  std::optional<long> nodes;
  std::optional<std::string> network;
  std::optional<std::string> gpu;  // replaces every GPU's model (same NVLink ports where the design uses them)
  std::optional<std::string> nic;  // replaces every NIC's model
  std::optional<int> nics_per_node;
  std::optional<FabricKind> fabric;
  std::optional<int> tiers;
  std::optional<double> oversubscription;
  std::optional<bool> gpudirect;
  std::optional<bool> p2p;
};

}  // namespace gf::topo
