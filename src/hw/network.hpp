#pragma once
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "hw/pcie_link.hpp"

namespace gf::hw {

// How a fabric's switches spread traffic over equal-cost uplinks: `spread` as if ideally (adaptive
// routing, packet spraying: the leaf's uplinks act as one bundle); `ecmp` by a static hash of
// each flow's headers, so that flows collide on some uplinks while others idle.
enum class LoadBalancing { spread, ecmp };
inline constexpr EnumNames<LoadBalancing, 2> kLoadBalancingNames{
    {{LoadBalancing::spread, "spread"}, {LoadBalancing::ecmp, "ecmp"}}};
inline const char* to_string(LoadBalancing b) { return name_of(kLoadBalancingNames, b); }

// A link technology between nodes, selectable with --network.
struct NetworkTech {
  std::string name;
  std::string family;     // infiniband | roce | ethernet | efa
  std::string transport;  // rdma | tcp | srd
  double line_rate_Gbps = 0;
  Bandwidth data_rate;  // payload rate per port per direction
  double efficiency = 1.0;
  Seconds endpoint_latency;
  std::string default_switch;
  std::string default_nic;
  LoadBalancing load_balancing = LoadBalancing::spread;
  std::string load_balancing_source;  // its citation where the file gives one beside it
  // The NCCL environment the network's vendor setup exports for every job (GCP's TCPX/TCPXO
  // profiles: NCCL_ALGO, NCCL_PROTO, NCCL_BUFFSIZE, ...): NCCL runs under it across nodes
  // unless the user sets the same variable. Values are checked where they are applied (comm).
  struct EnvVariable {
    std::string name;
    std::string value;
    SourceLocation where;
    std::string field;
  };
  std::vector<EnvVariable> nccl_env;
  std::string nccl_env_source;
  std::string source;
  std::string note;
};

struct NicSpec {
  std::string name;
  std::string display_name;
  Bandwidth max_rate;
  int ports = 1;
  PcieLink pcie;
  std::vector<std::string> families;
  Seconds latency;
  // Whether NCCL may run its LL and LL128 protocols through this NIC. False where the NIC's
  // NCCL network plugin sets NCCL_PROTO=simple because the endpoint cannot deliver 128-byte
  // aligned stores in order (LL and LL128 would corrupt data).
  bool ll_protocols = true;
  std::string source;
  std::string note;
};

struct SwitchSpec {
  std::string name;
  std::string display_name;
  std::string family;
  int radix = 0;
  Bandwidth port_rate;
  Seconds latency;
  bool sharp = false;
  // SHARP's sustained aggregation rate per port, as a fraction of the port's data rate: NCCL's
  // CollNet moves each node's share through the switch's reduction trees, which sustain less
  // than point-to-point RDMA on the same port. 0 where the switch has no SHARP.
  double sharp_efficiency = 0;
  std::string source;
  std::string note;
};

}  // namespace gf::hw
