#include "topo/network_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gf::topo {

namespace {
long ceil_div(long a, long b) { return (a + b - 1) / b; }
// The smallest divisor of n that is at least `at_least` (n itself if none is smaller), so that
// parallel links split evenly over the switches of the next tier.
long divisor_at_least(long n, long at_least) {
  for (long d = std::max(1L, at_least); d < n; ++d) {
    if (n % d == 0) return d;
  }
  return n;
}
std::string fmt_ratio(double r) { return fmt::format("{:g}:1", r); }
}  // namespace

NetworkFabric::NetworkFabric(FabricKind kind, int tiers, double oversubscription, const hw::SwitchSpec& sw,
                             const hw::NetworkTech& net, Bandwidth nic_rate, long nodes, int nics_per_node,
                             const FabricOrigins& from)
    : nics_per_node_(nics_per_node) {
  shape_.kind = kind;
  shape_.radix = sw.radix;
  shape_.endpoints = nodes * nics_per_node;
  nic_line_ = std::min(nic_rate, net.data_rate);
  nic_line_ = std::min(nic_line_, sw.port_rate);
  nic_capacity_ = nic_line_ * net.efficiency;
  port_line_ = std::min(sw.port_rate, net.data_rate);
  port_capacity_ = port_line_ * net.efficiency;
  switch_latency_ = sw.latency;
  endpoint_latency_ = net.endpoint_latency;
  const long k = sw.radix;
  const long e = shape_.endpoints;
  const std::string what = std::to_string(nodes) + " nodes x " + std::to_string(nics_per_node) +
                           " NICs = " + std::to_string(e) + " switch ports";

  if (e == 0) {
    shape_.tiers = 0;
    return;
  }
  if (kind == FabricKind::single) {
    if (e > k) {
      throw InputError(from.fabric.where, from.fabric.field,
                       "a single " + sw.name + " switch has " + std::to_string(k) + " ports, too few for " + what,
                       "fabric fat-tree or rail, fewer nodes, or a larger-radix switch");
    }
    shape_.tiers = 1;
    shape_.leaves = 1;
    shape_.down_ports = static_cast<int>(k);
    return;
  }
  // Leaf ports split down:up as close to R:1 as whole ports allow.
  const double r = oversubscription;
  long d = static_cast<long>(std::floor(static_cast<double>(k) * r / (r + 1.0)));
  d = std::clamp(d, 1L, k - 1);
  if (d + 1 <= k - 1 && std::abs(static_cast<double>(d + 1) / static_cast<double>(k - d - 1) - r) <
                            std::abs(static_cast<double>(d) / static_cast<double>(k - d) - r)) {
    ++d;
  }
  const long u = k - d;
  shape_.down_ports = static_cast<int>(d);
  shape_.up_ports = static_cast<int>(u);
  shape_.oversubscription = static_cast<double>(d) / static_cast<double>(u);
  shape_.leaves = kind == FabricKind::rail ? ceil_div(nodes, d) * nics_per_node : ceil_div(e, d);
  if (kind == FabricKind::fat_tree && e <= k) {
    // Everything fits on one leaf: there is no upper tier to build.
    shape_.tiers = 1;
    shape_.leaves = 1;
    shape_.down_ports = static_cast<int>(k);
    shape_.up_ports = 0;
    shape_.oversubscription = 1.0;
    return;
  }
  if (tiers == 0) tiers = shape_.leaves <= k ? 2 : 3;
  if (tiers == 2) {
    // Every leaf has one link to each of u spines; a spine's k ports bound the leaf count.
    if (shape_.leaves > k) {
      throw InputError(from.tiers.where, from.tiers.field,
                       "a two-tier " + std::string(to_string(kind)) + " of radix-" + std::to_string(k) + " " + sw.name +
                           " switches holds at most " + std::to_string(k) + " leaves (" + std::to_string(k * d) +
                           " ports at oversubscription " + fmt_ratio(shape_.oversubscription) + "); " + what +
                           " need " + std::to_string(shape_.leaves),
                       "3 tiers, a higher oversubscription, a larger-radix switch, or fewer nodes");
    }
    // Only as many spines as the leaves' uplinks fill; each leaf spreads its u uplinks evenly.
    shape_.tiers = 2;
    shape_.spines = divisor_at_least(u, ceil_div(shape_.leaves * u, k));
    shape_.spine_links = u / shape_.spines;
    return;
  }
  // Three tiers: pods of k/2 leaves, each leaf linked to the pod's u aggregation switches;
  // aggregation switches have k/2 ports down and k/2 up; core group j (k/2 switches) joins
  // aggregation switch j of every pod, so a core's k ports bound the pod count.
  const long half = k / 2;
  shape_.tiers = 3;
  shape_.pods = ceil_div(shape_.leaves, half);
  shape_.aggs_per_pod = u;
  // Each core group needs only enough switches for the pods that exist.
  shape_.cores_per_group = divisor_at_least(half, ceil_div(shape_.pods * half, k));
  shape_.core_links = half / shape_.cores_per_group;
  shape_.cores = u * shape_.cores_per_group;
  if (u > half) {
    throw InputError(from.oversubscription.where, from.oversubscription.field,
                     "a three-tier fabric needs at least as many leaf down-ports as up-ports", "R >= 1");
  }
  if (shape_.pods > k) {
    throw InputError(from.nodes.where, from.nodes.field,
                     "a three-tier " + std::string(to_string(kind)) + " of radix-" + std::to_string(k) + " " + sw.name +
                         " switches holds at most " + std::to_string(k) + " pods of " + std::to_string(half) +
                         " leaves (" + std::to_string(k * half * d) + " ports at oversubscription " +
                         fmt_ratio(shape_.oversubscription) + "); " + what + " need " + std::to_string(shape_.pods) +
                         " pods",
                     "a larger-radix switch, a higher oversubscription, or fewer nodes");
  }
}

long NetworkFabric::leaf_of(long node, int nic) const {
  if (shape_.tiers <= 1) return 0;
  if (shape_.kind == FabricKind::rail) return (node / shape_.down_ports) * nics_per_node_ + nic;
  return (node * nics_per_node_ + nic) / shape_.down_ports;
}

std::size_t NetworkFabric::switch_count() const {
  std::size_t planes = 0;
  if (shape_.tiers == 2) planes = 1;
  if (shape_.tiers == 3) planes = static_cast<std::size_t>(shape_.pods) + 1;
  return static_cast<std::size_t>(shape_.leaves + shape_.spines + shape_.pods * shape_.aggs_per_pod + shape_.cores) +
         planes;
}

std::size_t NetworkFabric::link_count() const {
  std::size_t n = static_cast<std::size_t>(shape_.endpoints);
  if (shape_.tiers == 2) n += static_cast<std::size_t>(shape_.leaves * shape_.up_ports);
  if (shape_.tiers == 3) {
    n += static_cast<std::size_t>(shape_.leaves * shape_.aggs_per_pod);
    n += static_cast<std::size_t>(shape_.pods * shape_.aggs_per_pod * shape_.cores_per_group);
  }
  // Bundles: one per leaf, plus one per pod in three tiers.
  if (shape_.tiers >= 2) n += static_cast<std::size_t>(shape_.leaves);
  if (shape_.tiers == 3) n += static_cast<std::size_t>(shape_.pods);
  return 2 * n;
}

void NetworkFabric::add_switches(Graph& g) {
  auto add_tier = [&](long count, std::uint8_t tier) {
    const auto base = static_cast<DeviceId>(g.device_count());
    for (long i = 0; i < count; ++i) {
      Device d;
      d.kind = DeviceKind::net_switch;
      d.tier = tier;
      d.index = static_cast<std::int32_t>(i);
      g.add_device(d);
    }
    return base;
  };
  leaf_base_ = add_tier(shape_.leaves, 1);
  spine_base_ = add_tier(shape_.spines, 2);
  agg_base_ = add_tier(shape_.pods * shape_.aggs_per_pod, 2);
  core_base_ = add_tier(shape_.cores, 3);
}

void NetworkFabric::add_upper_links(Graph& g) {
  up_link_base_ = static_cast<LinkId>(g.link_count());
  if (shape_.tiers == 2) {
    // One link per cable, so that a flow hashed onto one uplink port can collide with another
    // on it while the leaf's other ports idle: leaf l's uplink j goes to spine j / spine_links.
    for (long l = 0; l < shape_.leaves; ++l) {
      for (long s = 0; s < shape_.spines; ++s) {
        for (long q = 0; q < shape_.spine_links; ++q) {
          g.add_duplex(leaf_base_ + static_cast<DeviceId>(l), spine_base_ + static_cast<DeviceId>(s), port_line_,
                       port_capacity_, switch_latency_, switch_latency_, LinkKind::network, 1);
        }
      }
    }
  } else if (shape_.tiers == 3) {
    const long half = shape_.radix / 2;
    for (long l = 0; l < shape_.leaves; ++l) {
      const long pod = l / half;
      for (long a = 0; a < shape_.aggs_per_pod; ++a) {
        g.add_duplex(leaf_base_ + static_cast<DeviceId>(l),
                     agg_base_ + static_cast<DeviceId>(pod * shape_.aggs_per_pod + a), port_line_, port_capacity_,
                     switch_latency_, switch_latency_, LinkKind::network, 1);
      }
    }
    core_link_base_ = static_cast<LinkId>(g.link_count());
    for (long p = 0; p < shape_.pods; ++p) {
      for (long a = 0; a < shape_.aggs_per_pod; ++a) {
        for (long c = 0; c < shape_.cores_per_group; ++c) {
          const double m = static_cast<double>(shape_.core_links);
          g.add_duplex(agg_base_ + static_cast<DeviceId>(p * shape_.aggs_per_pod + a),
                       core_base_ + static_cast<DeviceId>(a * shape_.cores_per_group + c), port_line_ * m,
                       port_capacity_ * m, switch_latency_, switch_latency_, LinkKind::network,
                       static_cast<int>(shape_.core_links));
        }
      }
    }
  }
}

void NetworkFabric::add_bundles(Graph& g) {
  if (shape_.tiers < 2) return;
  auto add_plane = [&](std::uint8_t tier, long index) {
    Device d;
    d.kind = DeviceKind::fabric_plane;
    d.tier = tier;
    d.index = static_cast<std::int32_t>(index);
    return g.add_device(d);
  };
  const long pods = shape_.tiers == 3 ? shape_.pods : 1;
  std::vector<DeviceId> pod_plane;
  for (long p = 0; p < pods; ++p) pod_plane.push_back(add_plane(2, p));
  const double up = static_cast<double>(shape_.up_ports);
  leaf_bundle_base_ = static_cast<LinkId>(g.link_count());
  const long half = shape_.radix / 2;
  for (long l = 0; l < shape_.leaves; ++l) {
    const long p = shape_.tiers == 3 ? l / half : 0;
    // Two switch hops: leaf -> spine (or aggregation) is where the latency is paid.
    g.add_duplex(leaf_base_ + static_cast<DeviceId>(l), pod_plane[static_cast<std::size_t>(p)], port_line_ * up,
                 port_capacity_ * up, switch_latency_, switch_latency_, LinkKind::bundle, shape_.up_ports);
  }
  if (shape_.tiers == 3) {
    const DeviceId core = add_plane(3, 0);
    const double width = static_cast<double>(shape_.aggs_per_pod * half);
    pod_bundle_base_ = static_cast<LinkId>(g.link_count());
    for (long p = 0; p < shape_.pods; ++p) {
      g.add_duplex(pod_plane[static_cast<std::size_t>(p)], core, port_line_ * width, port_capacity_ * width,
                   switch_latency_, switch_latency_, LinkKind::bundle, static_cast<int>(width));
    }
  }
}

void NetworkFabric::route_bundled(long n1, int r1, long n2, int r2, std::vector<LinkId>& out) const {
  const long e1 = n1 * nics_per_node_ + r1;
  const long e2 = n2 * nics_per_node_ + r2;
  const long l1 = leaf_of(n1, r1);
  const long l2 = leaf_of(n2, r2);
  out.push_back(nic_link_base_ + static_cast<LinkId>(2 * e1));
  if (l1 != l2) {
    out.push_back(leaf_bundle_base_ + static_cast<LinkId>(2 * l1));
    if (shape_.tiers == 3) {
      const long half = shape_.radix / 2;
      const long p1 = l1 / half;
      const long p2 = l2 / half;
      if (p1 != p2) {
        out.push_back(pod_bundle_base_ + static_cast<LinkId>(2 * p1));
        out.push_back(pod_bundle_base_ + static_cast<LinkId>(2 * p2) + 1);
      }
    }
    out.push_back(leaf_bundle_base_ + static_cast<LinkId>(2 * l2) + 1);
  }
  out.push_back(nic_link_base_ + static_cast<LinkId>(2 * e2) + 1);
}

int NetworkFabric::route(long n1, int r1, long n2, int r2, std::uint64_t hash, std::vector<LinkId>& out) const {
  const long e1 = n1 * nics_per_node_ + r1;
  const long e2 = n2 * nics_per_node_ + r2;
  const long l1 = leaf_of(n1, r1);
  const long l2 = leaf_of(n2, r2);
  out.push_back(nic_link_base_ + static_cast<LinkId>(2 * e1));
  int ecmp = 1;
  if (l1 != l2) {
    if (shape_.tiers == 2) {
      out.push_back(up_port(l1, hash, true));
      out.push_back(up_port(l2, hash, false));
      ecmp = shape_.up_ports;
    } else {
      const long half = shape_.radix / 2;
      const long a = static_cast<long>(hash % static_cast<std::uint64_t>(shape_.aggs_per_pod));
      const long p1 = l1 / half;
      const long p2 = l2 / half;
      out.push_back(up_port(l1, hash, true));
      if (p1 != p2) {
        const long cg = shape_.cores_per_group;
        const long c = static_cast<long>((hash / static_cast<std::uint64_t>(shape_.aggs_per_pod)) %
                                         static_cast<std::uint64_t>(cg));
        out.push_back(core_link_base_ + static_cast<LinkId>(2 * ((p1 * shape_.aggs_per_pod + a) * cg + c)));
        out.push_back(core_link_base_ + static_cast<LinkId>(2 * ((p2 * shape_.aggs_per_pod + a) * cg + c)) + 1);
        ecmp = static_cast<int>(shape_.aggs_per_pod * half);
      } else {
        ecmp = static_cast<int>(shape_.aggs_per_pod);
      }
      out.push_back(up_port(l2, hash, false));
    }
  }
  out.push_back(nic_link_base_ + static_cast<LinkId>(2 * e2) + 1);
  return ecmp;
}

LinkId NetworkFabric::up_port(long leaf, std::uint64_t hash, bool upward) const {
  // The leaf hashes the flow onto one of its u uplinks; in two tiers that picks spine
  // j / spine_links, which hashes again onto one of its spine_links cables down to the far leaf.
  // In three tiers the core group of aggregation switch a reaches aggregation switch a of every
  // pod, so the far leaf's downlink is port a again.
  const auto u = static_cast<std::uint64_t>(shape_.up_ports);
  const auto j = static_cast<long>(hash % u);
  long port = j;
  if (!upward && shape_.tiers == 2) {
    const long m = shape_.spine_links;
    port = (j / m) * m + static_cast<long>((hash / u) % static_cast<std::uint64_t>(m));
  }
  return up_link_base_ + static_cast<LinkId>(2 * (leaf * shape_.up_ports + port)) + (upward ? 0 : 1);
}

bool NetworkFabric::hashed_path(std::span<const LinkId> bundled, std::uint64_t hash, std::vector<LinkId>& out) const {
  out.clear();
  bool hashed = false;
  const auto first = leaf_bundle_base_;
  const auto end = leaf_bundle_base_ + static_cast<LinkId>(2 * shape_.leaves);
  for (const LinkId l : bundled) {
    if (shape_.tiers < 2 || l < first || l >= end) {
      out.push_back(l);
      continue;
    }
    const long leaf = static_cast<long>((l - first) / 2);
    out.push_back(up_port(leaf, hash, (l - first) % 2 == 0));
    hashed = true;
  }
  return hashed;
}

double NetworkFabric::bisection_ports() const {
  // Worst balanced cut: half the leaves (pods) on each side.
  double ports = static_cast<double>(shape_.endpoints) / 2.0;
  if (shape_.tiers >= 2) {
    ports = std::min(ports, static_cast<double>(shape_.leaves) / 2.0 * shape_.up_ports);
  }
  if (shape_.tiers == 3 && shape_.pods > 1) {
    ports = std::min(ports, static_cast<double>(shape_.pods) / 2.0 * static_cast<double>(shape_.aggs_per_pod) *
                                static_cast<double>(shape_.radix / 2));
  }
  return ports;
}

Bandwidth NetworkFabric::bisection_line() const {
  if (shape_.tiers <= 1) return nic_line_ * (static_cast<double>(shape_.endpoints) / 2.0);
  return std::min(nic_line_ * (static_cast<double>(shape_.endpoints) / 2.0), port_line_ * bisection_ports());
}

Bandwidth NetworkFabric::bisection_achievable() const {
  if (shape_.tiers <= 1) return nic_capacity_ * (static_cast<double>(shape_.endpoints) / 2.0);
  return std::min(nic_capacity_ * (static_cast<double>(shape_.endpoints) / 2.0), port_capacity_ * bisection_ports());
}

}  // namespace gf::topo
