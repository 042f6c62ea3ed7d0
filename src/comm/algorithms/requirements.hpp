#pragma once
// What a forced algorithm needs from the hardware, shared by the algorithms that need the same
// thing: an InputError naming what is missing and what would run instead.
#include "comm/collective.hpp"

namespace gf::comm {

class Communicator;

// NVLS and NVLSTree: an NVSwitch with NVLink SHARP (NVSwitch gen 3 or newer).
void require_nvlink_sharp(const Communicator& c, Algo forced);
// CollNet: InfiniBand switches with SHARP.
void require_network_sharp(const Communicator& c, Algo forced);

}  // namespace gf::comm
