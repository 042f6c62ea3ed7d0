#include "comm/transport.hpp"

#include <fmt/format.h>

namespace gf::comm {

std::string nccl_name(NcclTransport t, const std::string& net_name) {
  switch (t) {
    case NcclTransport::p2p: return "P2P/CUMEM";
    case NcclTransport::shm: return "SHM/direct/direct";
    case NcclTransport::net_gdr: return "NET/" + net_name + "/GDRDMA";
    case NcclTransport::net_pxn: return "NET/" + net_name + "/GDRDMA (PXN)";
    case NcclTransport::net_staged: return "NET/" + net_name;
    case NcclTransport::net_socket: return "NET/Socket";
  }
  return "?";
}

std::string nccl_net_connection(const std::string& net_name, int nic, int proxy_rank, bool gdr) {
  return fmt::format("NET/{}/{}{}{}", net_name, nic, proxy_rank >= 0 ? fmt::format("({})", proxy_rank) : "",
                     gdr ? "/GDRDMA" : "");
}

}  // namespace gf::comm
