#include "topo/graph.hpp"

namespace gf::topo {

const char* to_string(DeviceKind k) {
  switch (k) {
    case DeviceKind::gpu: return "gpu";
    case DeviceKind::cpu: return "cpu";
    case DeviceKind::memory: return "mem";
    case DeviceKind::pcie_switch: return "pcisw";
    case DeviceKind::nvswitch: return "nvswitch";
    case DeviceKind::nic: return "nic";
    case DeviceKind::storage: return "storage";
    case DeviceKind::net_switch: return "switch";
    case DeviceKind::fabric_plane: return "plane";
    case DeviceKind::kCount: break;
  }
  return "?";
}

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::socket: return "socket";
    case LinkKind::memory: return "memory";
    case LinkKind::network: return "network";
    case LinkKind::bundle: return "bundle";
    case LinkKind::kCount: break;
  }
  return "?";
}

DeviceId Graph::add_device(const Device& d) {
  devices_.push_back(d);
  return static_cast<DeviceId>(devices_.size() - 1);
}

LinkId Graph::add_duplex(DeviceId a, DeviceId b, Bandwidth line_rate, Bandwidth capacity, Seconds latency_ab,
                         Seconds latency_ba, LinkKind kind, int lanes) {
  const auto id = static_cast<LinkId>(links_.size());
  const auto l = static_cast<std::uint16_t>(lanes);
  links_.push_back({a, b, line_rate, capacity, latency_ab, kind, l});
  links_.push_back({b, a, line_rate, capacity, latency_ba, kind, l});
  return id;
}

LinkId Graph::append_link(const Link& l) {
  links_.push_back(l);
  return static_cast<LinkId>(links_.size() - 1);
}

void Graph::reserve(std::size_t devices, std::size_t links) {
  devices_.reserve(devices);
  links_.reserve(links);
}

std::string Graph::name(DeviceId id) const {
  const Device& d = devices_[id];
  if (d.kind == DeviceKind::fabric_plane) return (d.tier == 2 ? "pod-plane" : "core-plane") + std::to_string(d.index);
  if (d.kind == DeviceKind::net_switch) {
    static const char* tiers[] = {"switch", "leaf", "spine", "core"};
    return std::string(tiers[d.tier < 4 ? d.tier : 0]) + std::to_string(d.index);
  }
  std::string local = std::string(to_string(d.kind)) + std::to_string(d.index);
  return "node" + std::to_string(d.node) + "/" + local;
}

}  // namespace gf::topo
