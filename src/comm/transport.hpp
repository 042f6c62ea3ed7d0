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
#include <string>

namespace gf::comm {

enum class NcclTransport { p2p, shm, net_gdr, net_staged, net_socket };

// NCCL's spelling, e.g. "P2P/CUMEM", "SHM/direct/direct", "NET/IB/GDRDMA", "NET/Socket".
// `net_name` is the network plugin's name ("IB" for InfiniBand and RoCE, "Libfabric" for EFA).
std::string nccl_name(NcclTransport t, const std::string& net_name);

}  // namespace gf::comm
