#pragma once
// A node design as an importer read it from a user's file, with a note on every value the file
// did not state (the default chosen, and what to check), before it is written as a cluster file
// (docs/cluster-format.md). Both importers fill one of these, so the YAML they write agrees.
#include <optional>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"

namespace gf::topo::import {

struct ImportedAttachment {
  std::string parent;  // a switch name or cpuK
  std::optional<int> host_bridge;
  std::optional<int> lanes;
  std::optional<int> generation;
};

struct ImportedSwitch {
  std::string name;
  std::string parent;
  int generation = 4;
  int lanes = 16;
  std::optional<int> host_bridge;
  std::string comment;  // e.g. the bus id it was read from
};

struct ImportedNic {
  std::string model;
  ImportedAttachment at;
  std::string comment;  // where it was read (a bus id, a device name)
  std::string note;     // what the file did not say about it (its speed), as for Chosen
};

struct ImportedEdge {
  int a = 0;
  int b = 0;
  int links = 0;
};

// A value and, where the file did not state it, why it was chosen. Such a note is written as a
// YAML comment beside the value and reported as a warning.
struct Chosen {
  std::string value;
  std::string note;  // empty: read from the file
};

struct ImportedDesign {
  std::string file;  // the file read, for errors about what it describes
  std::string name;
  std::string description;
  std::string source;
  long nodes = 1;
  bool gpudirect = true;
  std::string gpudirect_note;
  Chosen gpu;
  int gpus = 0;
  Chosen cpu;
  int sockets = 1;
  double host_memory_GB = 0;
  std::string host_memory_note;
  GpuFabric gpu_fabric = GpuFabric::pcie;
  // The file cannot show NVLink (a cloud file naming GPUs by PCI class): an NVLink GPU given by
  // --gpu is put on its generation's NVSwitch, as the 8-GPU baseboards those images run on are.
  bool nvlink_unknown = false;
  int nvswitch_generation = 0;
  int nvswitch_count = 0;
  std::string nvswitch_note;
  std::vector<ImportedEdge> nvlink_mesh;
  std::vector<ImportedSwitch> switches;
  // The file shows no link speeds (topo -m): the switches run at the GPU's own PCIe generation,
  // set once the GPU is final (after --gpu).
  bool switches_at_gpu_generation = false;
  std::vector<ImportedAttachment> gpu_parents;
  std::vector<ImportedNic> nics;
  std::string nics_note;
  Chosen network;
  // Warnings that belong to no single value (a link the file hides, a class it skips).
  std::vector<std::string> notes;
};

// What the user may override on the command line (`--nodes`, `--network`, `--gpu`, `--cpu`).
struct ImportOptions {
  std::optional<long> nodes;
  std::optional<std::string> network;
  std::optional<std::string> gpu;
  std::optional<std::string> cpu;
};

// An imported cluster: the cluster file's text and every warning, in the order written.
struct ImportedCluster {
  std::string yaml;
  std::vector<std::string> warnings;
  int gpus = 0;
  int nvlinks_per_gpu = 0;
  int nics = 0;
};

// Applies the options (checked against the catalog, errors naming the flag) and writes the
// design as a cluster file with its comments; the warnings are every note, in file order. The
// text is loaded and one node built before it is returned: a design that cannot be built (more
// NVLinks than the GPU has, say) is an InputError about the file read, never a file that fails
// later.
ImportedCluster finish(ImportedDesign design, const ImportOptions& options, const hw::Catalog& catalog);

}  // namespace gf::topo::import
