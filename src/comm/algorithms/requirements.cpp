#include "comm/algorithms/requirements.hpp"

#include <fmt/format.h>

#include <string>

#include "comm/communicator.hpp"
#include "core/error.hpp"

namespace gf::comm {

void require_nvlink_sharp(const Communicator& c, Algo forced) {
  if (c.topology().node().nvswitch_sharp()) return;
  throw InputError(
      {}, "--algo",
      fmt::format("{} needs NVSwitch with NVLink SHARP (NVSwitch gen 3 or newer); {} has {}", to_string(forced),
                  c.topology().spec().name, c.topology().node().has_nvswitch() ? "an older NVSwitch" : "no NVSwitch"),
      "Ring, Tree" + std::string(c.sharp_capable() ? ", CollNetChain" : ""));
}

void require_network_sharp(const Communicator& c, Algo forced) {
  if (c.sharp_capable()) return;
  throw InputError({}, "--algo",
                   fmt::format("{} needs InfiniBand switches with SHARP; this network is {} with {} switches",
                               to_string(forced), c.topology().network().name, c.topology().network_switch().name),
                   "Ring, Tree, or a SHARP network (e.g. --network ib-ndr with quantum-2 switches)");
}

}  // namespace gf::comm
