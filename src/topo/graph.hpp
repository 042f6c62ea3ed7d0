#pragma once
// The device graph: devices and directed links with bandwidth and latency. Kept compact
// (plain structs in flat vectors, names made on demand) so 100,000-GPU clusters fit in memory.
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace gf::topo {

using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;

// fabric_plane and bundle are virtual: one plane stands for all switches of a tier, and a bundle
// for all of a leaf's (pod's) uplinks, so that traffic can be spread over ECMP paths ideally.
// kCount is not a kind: it is the number of kinds, so arrays indexed by kind grow with the enum.
enum class DeviceKind : std::uint8_t {
  gpu,
  cpu,
  memory,
  pcie_switch,
  nvswitch,
  nic,
  storage,
  net_switch,
  fabric_plane,
  kCount
};
enum class LinkKind : std::uint8_t { nvlink, pcie, socket, memory, network, bundle, kCount };

const char* to_string(DeviceKind k);
const char* to_string(LinkKind k);

struct Device {
  DeviceKind kind = DeviceKind::gpu;
  std::uint8_t tier = 0;     // network switches: 1 = leaf, 2 = spine/aggregation, 3 = core
  std::int16_t socket = -1;  // NUMA node within its server; -1 outside servers
  std::int32_t node = -1;    // server index; -1 for network switches
  std::int32_t index = 0;    // index among devices of its kind in its server (or tier)
};

struct Link {
  DeviceId src = 0;
  DeviceId dst = 0;
  Bandwidth line_rate;  // signalling payload rate, one direction
  Bandwidth capacity;   // achievable rate (line rate x measured efficiency)
  Seconds latency;      // added by traversing this link, including the device it leaves
  LinkKind kind = LinkKind::pcie;
  std::uint16_t lanes = 0;  // PCIe lanes or NVLink links, for display
};

class Graph {
public:
  DeviceId add_device(const Device& d);
  // Adds a link in each direction and returns the id of the first (a -> b); b -> a is id + 1.
  LinkId add_duplex(DeviceId a, DeviceId b, Bandwidth line_rate, Bandwidth capacity, Seconds latency_ab,
                    Seconds latency_ba, LinkKind kind, int lanes);
  // Copies a link as it is (used to stamp out node templates).
  LinkId append_link(const Link& l);
  Link& mutable_link(LinkId id) { return links_[id]; }
  void reserve(std::size_t devices, std::size_t links);

  [[nodiscard]] const Device& device(DeviceId id) const { return devices_[id]; }
  [[nodiscard]] const Link& link(LinkId id) const { return links_[id]; }
  [[nodiscard]] std::size_t device_count() const { return devices_.size(); }
  [[nodiscard]] std::size_t link_count() const { return links_.size(); }
  [[nodiscard]] const std::vector<Device>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Link>& links() const { return links_; }

  // "node3/gpu5", "leaf12", "spine0", ...
  [[nodiscard]] std::string name(DeviceId id) const;

private:
  std::vector<Device> devices_;
  std::vector<Link> links_;
};

}  // namespace gf::topo
