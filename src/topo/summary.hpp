#pragma once
// Whole-cluster figures: counts, per-GPU bandwidths, bisection, and one example route for each
// class of GPU pair, so a 16k-GPU cluster can be described without a 16k x 16k matrix.
#include <array>
#include <string>
#include <vector>

#include "topo/topology.hpp"

namespace gf::topo {

struct PairClass {
  std::string name;  // "same node", "same leaf switch", "same pod", "across spine", "across core"
  long src = 0;
  long dst = 0;
  Route route;
};

struct TopologySummary {
  long nodes = 0;
  long gpus = 0;
  std::size_t devices = 0;
  std::size_t links = 0;                         // directed
  std::array<std::size_t, 5> links_by_kind{};    // indexed by LinkKind
  std::array<std::size_t, 8> devices_by_kind{};  // indexed by DeviceKind
  Bandwidth gpu_nvlink;                          // per GPU, achievable, one direction
  Bandwidth node_gpu_bisection;                  // among one node's GPUs
  Bandwidth node_injection_line;                 // all compute NICs of one node, line rate
  Bandwidth node_injection;                      // achievable
  Bandwidth bisection_line;                      // whole network
  Bandwidth bisection;                           // achievable
  FabricShape fabric;
  std::vector<PairClass> classes;
};

TopologySummary summarize(const Topology& t);

}  // namespace gf::topo
