#include "comm/transport.hpp"

namespace gf::comm {

std::string nccl_name(NcclTransport t, const std::string& net_name) {
  switch (t) {
    case NcclTransport::p2p: return "P2P/CUMEM";
    case NcclTransport::shm: return "SHM/direct/direct";
    case NcclTransport::net_gdr: return "NET/" + net_name + "/GDRDMA";
    case NcclTransport::net_staged: return "NET/" + net_name;
    case NcclTransport::net_socket: return "NET/Socket";
  }
  return "?";
}

}  // namespace gf::comm
