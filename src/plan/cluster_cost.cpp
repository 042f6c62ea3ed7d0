#include "plan/cluster_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gf::plan {

std::string server_form(const topo::Topology& t) {
  switch (t.spec().node.gpu_fabric) {
    case topo::GpuFabric::nvswitch: return "nvswitch";
    case topo::GpuFabric::nvlink_mesh: return "nvlink-mesh";
    case topo::GpuFabric::pcie: return t.gpus_per_node() <= 4 ? "workstation" : "pcie";
  }
  return "pcie";
}

ClusterCost cluster_cost(const topo::Topology& t, long gpus_used, double storage_bytes, const PriceCatalog& prices,
                         long owned_nodes) {
  ClusterCost c;
  owned_nodes = std::clamp(owned_nodes, 0L, t.nodes());
  c.owned_nodes = owned_nodes;
  const double bought = static_cast<double>(t.nodes() - owned_nodes) / static_cast<double>(t.nodes());
  c.pue = prices.pue;
  c.nodes = t.nodes();
  c.gpus = gpus_used;
  const auto& gpu = prices.gpu(t.gpu_spec().name);
  c.gpus_usd = gpu.usd * static_cast<double>(gpus_used) * bought;
  double watts = t.gpu_spec().tdp.value() * static_cast<double>(gpus_used);
  const auto& server = prices.server(server_form(t));
  c.servers_usd = server.usd * static_cast<double>(c.nodes - owned_nodes);
  watts += server.power_w * static_cast<double>(c.nodes);
  if (server.power_w <= 0)
    c.assumptions.push_back("no power figure for the " + server_form(t) + " server: counted as 0 W");

  // NICs: only those that carry traffic between servers are bought when there is a network.
  const topo::NetworkFabric* fabric = t.fabric();
  long nics_per_node = 0;
  std::string nic_model;
  for (const auto& p : t.spec().node.nics) {
    nics_per_node += p.count;
    nic_model = p.model;
  }
  // A lone server needs no network: its NICs and the fabric are not bought.
  if (fabric != nullptr && nics_per_node > 0 && c.nodes > 1) {
    c.nics = nics_per_node * c.nodes;
    const auto& nic = prices.nic(nic_model);
    c.nics_usd = nic.usd * static_cast<double>(c.nics) * bought;
    watts += nic.power_w * static_cast<double>(c.nics);
    c.switches = static_cast<long>(fabric->switch_count());
    const auto& sw = prices.network_switch(t.network_switch().name);
    // Owned servers come with the network they are on; a larger cluster is cabled anew.
    const double network_bought = owned_nodes == c.nodes ? 0.0 : 1.0;
    c.switches_usd = sw.usd * static_cast<double>(c.switches) * network_bought;
    watts += sw.power_w * static_cast<double>(c.switches);
    // Optics: both ends of every NIC-to-leaf link at the NIC's rate, both ends of every link
    // between switches at the switch port rate (directed links counted twice by the fabric).
    const double nic_gbps = fabric->nic_line_rate().value() * 8 / 1e9;
    const double port_gbps = fabric->port_line_rate().value() * 8 / 1e9;
    const long endpoints = fabric->shape().endpoints;
    const long switch_links = std::max(0L, static_cast<long>(fabric->link_count() / 2) - endpoints);
    const auto& nic_optic = prices.optic(nic_gbps);
    const auto& port_optic = prices.optic(port_gbps);
    c.optics = 2 * endpoints + 2 * switch_links;
    c.optics_usd = (2.0 * static_cast<double>(endpoints) * nic_optic.usd +
                    2.0 * static_cast<double>(switch_links) * port_optic.usd) *
                   network_bought;
    watts += 2.0 * static_cast<double>(endpoints) * nic_optic.power_w +
             2.0 * static_cast<double>(switch_links) * port_optic.power_w;
  }
  if (storage_bytes > 0) {
    // A parallel file system's price per TB where the catalog has one; else its drives alone at
    // the NVMe price (a lower bound: servers, network and software not counted, stated).
    const auto fs = prices.storage.find("parallel-fs");
    const auto nvme = prices.storage.find("nvme");
    if (fs != prices.storage.end()) {
      c.storage_usd = fs->second.usd * storage_bytes / 1e12;
    } else if (nvme != prices.storage.end()) {
      c.storage_usd = nvme->second.usd * storage_bytes / 1e12;
      c.assumptions.push_back(
          "checkpoint storage priced as NVMe drives alone (no parallel file system price in the "
          "catalog): a lower bound");
    } else {
      c.assumptions.push_back("no storage price: checkpoint storage not costed");
    }
  }
  c.it_power_max = Watts(watts);
  c.it_power_avg = Watts(watts * prices.utilisation.usd);
  if (prices.rack.power_w > 0) {
    c.racks = static_cast<long>(std::ceil(watts / prices.rack.power_w - 1e-9));
    c.racks_usd = prices.rack.usd * static_cast<double>(c.racks);
    if (prices.rack.usd <= 0) c.assumptions.push_back("no rack price in the catalog: racks counted, not costed");
  }
  return c;
}

RunningCost running_cost(const ClusterCost& c, Seconds run, const PriceCatalog& prices) {
  RunningCost r;
  const double hours = run.value() / 3600;
  const double kwh = c.facility_power_avg().value() / 1e3 * hours;
  r.energy_mwh = kwh / 1e3;
  r.energy_usd = kwh * prices.electricity.usd;
  r.amortised_capex_usd = c.capex_usd() * hours / (prices.lifetime.usd * 365.25 * 24);
  return r;
}

}  // namespace gf::plan
