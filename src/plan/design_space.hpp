#pragma once
// The designs a plan searches: every node type (a preset or a cluster file) kept by the plan's
// filters, crossed with its network, NIC count, GPUDirect, fabric, oversubscription and P2P
// choices. A design is built into a topology at each node count.
#include <memory>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "plan/plan_spec.hpp"
#include "topo/cluster_spec.hpp"
#include "topo/topology.hpp"

namespace gf::plan {

struct Design {
  std::string key;     // canonical, stable across runs (part of every stored result's key)
  std::string label;   // for people: "dgx-h100 · ib-ndr x8 · fat-tree 1:1"
  std::string source;  // the preset's name or the cluster file
  topo::ClusterSpec base;
  topo::ClusterOverrides overrides;  // applied with the node count
  long gpus_per_node = 0;            // GPUs used per server
  // Fewer GPUs than the node type holds. A PCIe server is built with only that many (its first
  // slots populated: a real configuration, at any node count); an NVLink or NVSwitch baseboard
  // is not sold part-populated, so there the design is one server running on its first GPUs.
  bool partial = false;  // one server only
  bool trimmed = false;  // a PCIe server with fewer GPUs
  std::string gpu;
  std::string intra_node;
  std::string network;  // as chosen (or the node's own)
  long nics_per_node = 0;
  bool gpudirect = true;
  bool p2p = true;
  std::string fabric;  // as asked ("auto": the topology's choice)
  double oversubscription = 1;
};

struct DesignSet {
  std::vector<Design> designs;
  std::vector<std::string> skipped;  // node types the filters or the catalog ruled out, and why
};

DesignSet enumerate_designs(const PlanSpec& plan, const hw::Catalog& catalog);

// The cluster of `nodes` servers of the design (InputError when the fabric cannot be built, e.g.
// more NIC ports than the switch tiers hold).
std::unique_ptr<topo::Topology> build_topology(const Design& d, long nodes, const hw::Catalog& catalog);

}  // namespace gf::plan
