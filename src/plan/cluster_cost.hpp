#pragma once
// What a cluster costs to buy and to run: GPUs, the servers around them, NICs, switches, the
// optics at both ends of every link, checkpoint storage, racks; its power at full load and on
// average, at the wall (x PUE). Counts come from the built topology (its fabric's switches and
// links), prices from the price catalog.
#include <string>
#include <vector>

#include "core/units.hpp"
#include "plan/price_catalog.hpp"
#include "topo/topology.hpp"

namespace gf::plan {

struct ClusterCost {
  long gpus = 0;
  long nodes = 0;
  long nics = 0;
  long switches = 0;
  long optics = 0;  // link ends with a transceiver (or a cable end)
  long racks = 0;
  long owned_nodes = 0;
  double gpus_usd = 0, servers_usd = 0, nics_usd = 0, switches_usd = 0, optics_usd = 0, storage_usd = 0, racks_usd = 0;
  Watts it_power_max;  // every device at its rated power
  Watts it_power_avg;  // x the catalog's average-to-maximum fraction
  double pue = 1;
  [[nodiscard]] double capex_usd() const {
    return gpus_usd + servers_usd + nics_usd + switches_usd + optics_usd + storage_usd + racks_usd;
  }
  [[nodiscard]] Watts facility_power_avg() const { return Watts(it_power_avg.value() * pue); }
  [[nodiscard]] Watts facility_power_max() const { return Watts(it_power_max.value() * pue); }
  std::vector<std::string> assumptions;
};

// `gpus_used`: GPUs of the cluster that run (fewer than all only on a single server: the rest
// are not bought). `storage_bytes`: checkpoint storage to provision (parallel file system).
// `owned_nodes`: servers the team already has (with their GPUs and NICs): not bought again;
// when they are all the servers, the network they are on is owned too.
ClusterCost cluster_cost(const topo::Topology& t, long gpus_used, double storage_bytes, const PriceCatalog& prices,
                         long owned_nodes = 0);

// The server form a node is priced as: nvswitch, nvlink-mesh, pcie, or workstation (PCIe with
// four GPUs or fewer).
std::string server_form(const topo::Topology& t);

// Running cost: energy at the facility's average power for `seconds`, and its price.
struct RunningCost {
  double energy_mwh = 0;
  double energy_usd = 0;
  double amortised_capex_usd = 0;  // capex x run time / depreciation period
  [[nodiscard]] double total_usd() const { return energy_usd + amortised_capex_usd; }
};
RunningCost running_cost(const ClusterCost& c, Seconds run, const PriceCatalog& prices);

}  // namespace gf::plan
