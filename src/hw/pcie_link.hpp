#pragma once

namespace gf::hw {

// A PCIe attachment: generation and lane count. The rate comes from the catalog's PcieGen.
struct PcieLink {
  int generation = 0;
  int lanes = 0;
};

}  // namespace gf::hw
