#include "probe/profile.hpp"

#include <cmath>

namespace gf::probe {

int pcie_generation_from_gtps(double gtps) {
  // 2.5, 5, 8, 16, 32 and 64 GT/s are Gen1..Gen6; anything else is not a PCIe rate.
  constexpr double kRates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  for (int i = 0; i < 6; ++i) {
    if (std::abs(gtps - kRates[i]) < 0.01) return i + 1;
  }
  return 0;
}

}  // namespace gf::probe
