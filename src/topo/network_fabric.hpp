#pragma once
// The network between servers: one switch, a two- or three-tier fat-tree with an
// oversubscribed leaf, or a rail-optimized fabric. Switch counts, link ids and routes are all
// arithmetic on the endpoint index, so routing is O(hops) at any scale.
#include <cstdint>
#include <span>
#include <vector>

#include "hw/network.hpp"
#include "topo/cluster_spec.hpp"
#include "topo/graph.hpp"

namespace gf::topo {

struct FabricShape {
  FabricKind kind = FabricKind::single;
  int tiers = 1;  // switch tiers actually built (1 when everything fits on one leaf)
  int radix = 0;
  int down_ports = 0;  // per leaf, towards NICs
  int up_ports = 0;    // per leaf, towards the next tier
  long leaves = 0;
  long spines = 0;       // two tiers
  long spine_links = 1;  // parallel links between a leaf and each spine
  long pods = 0;         // three tiers
  long aggs_per_pod = 0;
  long cores = 0;
  long cores_per_group = 0;  // core switches joined to aggregation switch j of every pod
  long core_links = 1;       // parallel links between an aggregation switch and each core
  long endpoints = 0;
  double oversubscription = 1.0;  // leaf down:up ratio actually built
};

// Where the fabric's settings came from, so that an error names what the user wrote (a flag, or
// a cluster file's field at its line), never a flag the user did not type.
struct FabricOrigins {
  Origin fabric = flag_origin("--fabric");
  Origin tiers = flag_origin("--tiers");
  Origin oversubscription = flag_origin("--oversubscription");
  Origin nodes = flag_origin("--nodes");
};

class NetworkFabric {
public:
  // Plans the fabric; throws InputError when the switch radix cannot hold the endpoints.
  // tiers 0: the fewest tiers (2 or 3) that hold the endpoints.
  NetworkFabric(FabricKind kind, int tiers, double oversubscription, const hw::SwitchSpec& sw,
                const hw::NetworkTech& net, Bandwidth nic_rate, long nodes, int nics_per_node,
                const FabricOrigins& from = {});

  // Whether one switch of radix `radix` holds every endpoint.
  static bool fits_one_switch(long nodes, int nics_per_node, int radix) { return nodes * nics_per_node <= radix; }

  // Adds switches and links to `g`. `nic_device(node, nic)` gives the NIC's device id.
  template <typename NicDevice>
  void build(Graph& g, NicDevice nic_device);

  // Appends the links from endpoint (n1, r1)'s NIC to endpoint (n2, r2)'s NIC; the ECMP
  // alternative is picked deterministically from `hash`. Returns the number of alternatives.
  int route(long n1, int r1, long n2, int r2, std::uint64_t hash, std::vector<LinkId>& out) const;
  // The same route with every tier's uplinks taken as one bundle: traffic spread ideally over
  // all equal-cost paths (as many queue pairs per connection and adaptive routing do).
  void route_bundled(long n1, int r1, long n2, int r2, std::vector<LinkId>& out) const;

  // The path a flow of `bundled` (a route_bundled path) takes when the switches place it by a
  // hash of its headers (ECMP): each leaf's uplink bundle becomes the one uplink cable the hash
  // picks, and the far leaf's downlink bundle the cable the spine picks. Links outside the leaf
  // tier stay as they are (a three-tier core is still spread ideally). Returns whether the path
  // left a leaf at all (a flow inside one leaf has nothing to hash).
  bool hashed_path(std::span<const LinkId> bundled, std::uint64_t hash, std::vector<LinkId>& out) const;

  [[nodiscard]] const FabricShape& shape() const { return shape_; }
  // The link from NIC `nic` of `node` up to its leaf switch; leaf -> NIC is this id + 1.
  [[nodiscard]] LinkId nic_uplink(long node, int nic) const {
    return nic_link_base_ + static_cast<LinkId>(2 * (node * nics_per_node_ + nic));
  }
  [[nodiscard]] long leaf_of(long node, int nic) const;
  [[nodiscard]] std::size_t switch_count() const;
  [[nodiscard]] std::size_t link_count() const;  // directed links this fabric adds
  // Bisection bandwidth, one direction, at line rate and achievable.
  [[nodiscard]] Bandwidth bisection_line() const;
  [[nodiscard]] Bandwidth bisection_achievable() const;
  [[nodiscard]] Bandwidth port_line_rate() const { return port_line_; }
  [[nodiscard]] Bandwidth nic_line_rate() const { return nic_line_; }

private:
  void add_switches(Graph& g);
  void add_upper_links(Graph& g);
  [[nodiscard]] double bisection_ports() const;  // in units of one port, one direction
  // The uplink cable (upward) or downlink cable of `leaf` that a flow hashed to `hash` takes.
  [[nodiscard]] LinkId up_port(long leaf, std::uint64_t hash, bool upward) const;

  FabricShape shape_;
  int nics_per_node_ = 0;
  Bandwidth port_line_, port_capacity_;
  Bandwidth nic_line_, nic_capacity_;
  Seconds switch_latency_, endpoint_latency_;
  void add_bundles(Graph& g);

  DeviceId leaf_base_ = 0, spine_base_ = 0, agg_base_ = 0, core_base_ = 0;
  LinkId nic_link_base_ = 0, up_link_base_ = 0, core_link_base_ = 0;
  LinkId leaf_bundle_base_ = 0, pod_bundle_base_ = 0;  // leaf <-> plane, pod plane <-> core plane
};

template <typename NicDevice>
void NetworkFabric::build(Graph& g, NicDevice nic_device) {
  add_switches(g);
  // NIC <-> leaf links first, in endpoint order, so endpoint e's link is nic_link_base_ + 2e.
  nic_link_base_ = static_cast<LinkId>(g.link_count());
  const long nodes = shape_.endpoints / (nics_per_node_ > 0 ? nics_per_node_ : 1);
  for (long n = 0; n < nodes; ++n) {
    for (int r = 0; r < nics_per_node_; ++r) {
      const DeviceId leaf = leaf_base_ + static_cast<DeviceId>(leaf_of(n, r));
      // The two ends' NIC and software latency is split over the first and last hop.
      g.add_duplex(nic_device(n, r), leaf, nic_line_, nic_capacity_, endpoint_latency_ * 0.5,
                   switch_latency_ + endpoint_latency_ * 0.5, LinkKind::network, 1);
    }
  }
  add_upper_links(g);
  add_bundles(g);
}

}  // namespace gf::topo
