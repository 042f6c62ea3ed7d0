#pragma once
// The transport NCCL connects two ranks with (src/graph/paths.cc, src/transport/*.cc), and the
// name NCCL_DEBUG=INFO prints for it ("Channel 00 : 0[0] -> 1[1] via P2P/CUMEM").
//
// Inside a server: P2P (NVLink or PCIe peer-to-peer) when the driver allows it and the GPUs are
// no further apart than NCCL_P2P_LEVEL (PXB by default: a common PCIe switch); otherwise SHM,
// where the GPUs' own threads store into and load from a buffer in host memory. Between
// servers: the NIC reads and writes GPU memory (GPUDirect RDMA) when the GPU is no further from
// it than NCCL_NET_GDR_LEVEL (PXB); otherwise the data is staged in host memory; and with a TCP
// network (or NCCL_IB_DISABLE=1) NCCL's socket transport moves it through the kernel.
// PXN (src/graph/paths.cc, ncclTopoComputePaths): a GPU whose NICs are all behind the CPU (PHB,
// SYS) sends through a NVLink-connected peer GPU that sits on a NIC's PCIe switch: the data
// crosses NVLink into the peer's memory, and the NIC reads it from there (GPUDirect RDMA at the
// peer's distance); NCCL_DEBUG prints the peer's rank after the NIC, "NET/IB/0(1)/GDRDMA".
#include <string>

namespace gf::comm {

enum class NcclTransport { p2p, shm, net_gdr, net_pxn, net_staged, net_socket };

// NCCL's spelling, e.g. "P2P/CUMEM", "SHM/direct/direct", "NET/IB/GDRDMA", "NET/Socket".
// `net_name` is the network plugin's name ("IB" for InfiniBand and RoCE, "Libfabric" for EFA).
// PXN, without a NIC and a proxy rank to name, is "NET/IB/GDRDMA (PXN)".
std::string nccl_name(NcclTransport t, const std::string& net_name);

// The name of one network connection as NCCL's send side prints it (src/transport/net.cc,
// sendSetup): "NET/IB/3/GDRDMA", or through a PXN proxy rank "NET/IB/3(1)/GDRDMA"; staged in
// host memory it has no "/GDRDMA".
std::string nccl_net_connection(const std::string& net_name, int nic, int proxy_rank, bool gdr);

}  // namespace gf::comm
