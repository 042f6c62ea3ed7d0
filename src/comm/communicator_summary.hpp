#pragma once
// A communicator in fields, for machine-readable outputs: the ranks and how they sit on the
// nodes, the hardware, the fabric between the nodes, the transports NCCL would use and the NCCL
// environment it runs under (the user's --env and the network's vendor profile, applied).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "comm/communicator.hpp"

namespace gf::comm {

struct CommunicatorSummary {
  std::string description;  // the one line the text header prints
  long ranks = 0;
  long nodes = 0;
  int gpus_per_node = 0;  // the cluster node's GPUs
  int ranks_per_node = 0;
  std::string gpu;
  std::string gpu_fabric;  // inside a node: nvswitch | nvlink-mesh | pcie
  bool nvlink_intra = false;
  std::string network;  // the catalog's network technology
  std::string network_family;
  std::vector<std::string> nics;  // the NIC models of a node, each once
  int nics_per_node = 0;
  std::string fabric;  // between nodes: single | fat-tree | rail
  int fabric_tiers = 0;
  double oversubscription = 1.0;
  std::string network_switch;
  bool gpudirect = true;
  std::vector<std::string> transports;  // one line per class of edge, as NCCL_DEBUG=INFO names them
  std::map<std::string, std::string> nccl_env;
};

CommunicatorSummary summarize(const Communicator& c);
// The JSON object of `collective --format json`'s "comm" (nlohmann's ADL hook: json j = s).
void to_json(nlohmann::json& j, const CommunicatorSummary& s);

}  // namespace gf::comm
