#pragma once
#include <optional>
#include <string>

#include "core/units.hpp"
#include "hw/pcie_link.hpp"

namespace gf::hw {

struct CpuSpec {
  std::string name;
  std::string display_name;
  int cores = 0;
  std::string memory_type;
  int memory_channels = 0;
  double memory_mts = 0;
  Bandwidth memory_bandwidth;  // theoretical, per socket
  double stream_efficiency = 1.0;
  PcieLink pcie;                         // lanes per socket
  std::optional<Bandwidth> socket_link;  // per direction between two sockets
  // What a PCIe device's traffic across the socket link reaches (DMA to the other socket's
  // memory, peer traffic), where it is below the CPU-to-CPU rate; unset: the link's rate.
  std::optional<Bandwidth> socket_link_device;
  // What peer-to-peer traffic between PCIe devices on different sockets (GPU to GPU with
  // NCCL_P2P_LEVEL=SYS, a NIC reading another socket's GPU) reaches across the link: SM-driven
  // peer transfers cross Intel's UPI far below its CPU-to-CPU rate; unset: the device rate.
  std::optional<Bandwidth> socket_link_peer;
  std::string socket_link_name;
  Seconds socket_link_latency;
  std::string source;
  std::string note;
};

struct StorageSpec {
  std::string name;
  std::string kind;  // hdd | sata-ssd | nvme | network-fs
  Bandwidth read;
  Bandwidth write;
  std::optional<PcieLink> pcie;  // set for NVMe
  Seconds latency;
  std::string source;
  std::string note;
};

}  // namespace gf::hw
