#include "comm/communicator_summary.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace gf::comm {

CommunicatorSummary summarize(const Communicator& c) {
  const topo::Topology& t = c.topology();
  CommunicatorSummary s;
  s.description = c.describe();
  s.ranks = c.ranks();
  s.nodes = c.nodes();
  s.gpus_per_node = t.gpus_per_node();
  s.ranks_per_node = c.ranks_per_node();
  s.gpu = t.gpu_spec().name;
  s.gpu_fabric = topo::to_string(t.spec().node.gpu_fabric);
  s.nvlink_intra = c.nvlink_intra();
  s.network = t.network().name;
  s.network_family = t.network().family;
  for (const auto& n : t.spec().node.nics) {
    if (std::find(s.nics.begin(), s.nics.end(), n.model) == s.nics.end()) s.nics.push_back(n.model);
  }
  s.nics_per_node = c.nics_per_node();
  if (const topo::NetworkFabric* f = t.fabric()) {
    s.fabric = topo::to_string(f->shape().kind);
    s.fabric_tiers = f->shape().tiers;
    s.oversubscription = f->shape().oversubscription;
  }
  s.network_switch = t.network_switch().name;
  s.gpudirect = t.gpudirect_active();
  s.transports = c.transport_summary();
  for (const auto& [name, value] : c.env().variables()) s.nccl_env[name] = value;
  return s;
}

void to_json(nlohmann::json& j, const CommunicatorSummary& s) {
  j = {{"description", s.description},
       {"ranks", s.ranks},
       {"nodes", s.nodes},
       {"gpus_per_node", s.gpus_per_node},
       {"ranks_per_node", s.ranks_per_node},
       {"gpu", s.gpu},
       {"gpu_fabric", s.gpu_fabric},
       {"nvlink_intra", s.nvlink_intra},
       {"network", s.network},
       {"network_family", s.network_family},
       {"nics", s.nics},
       {"nics_per_node", s.nics_per_node},
       {"fabric", s.fabric},
       {"fabric_tiers", s.fabric_tiers},
       {"oversubscription", s.oversubscription},
       {"switch", s.network_switch},
       {"gpudirect", s.gpudirect},
       {"transports", s.transports},
       {"nccl_env", s.nccl_env}};
}

}  // namespace gf::comm
