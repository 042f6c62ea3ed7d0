#pragma once
// What the detected (or loaded) hardware should do, beside what it did. Pure functions over a
// Profile and the catalog, so a test can hand in a deliberately degraded profile.
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "probe/profile.hpp"

namespace gf::probe {

// Host memory: flag STREAM triad below this fraction of the CPU's theoretical bandwidth (channels x
// MT/s x 8 bytes). Healthy servers reach 0.78-0.81 (the catalog's stream_efficiency, from
// AnandTech's STREAM runs); 0.6 leaves room for SNC/NPS settings and run-to-run noise while still
// catching half-populated channels or DIMMs running a speed grade or two below the CPU's rating.
inline constexpr double kMemoryFloor = 0.60;

// Pinned H2D/D2H: flag a large copy below this fraction of the link's achievable rate (catalog
// lane rate x lanes x copy_efficiency). copy_efficiency is already the typical achieved fraction,
// and the measurements behind it spread about +-5% (0.76-0.84 on Gen4), so 0.9 of it is a real
// shortfall (a remote-NUMA buffer, a throttled root port, a link trained low), not noise.
inline constexpr double kCopyFloor = 0.90;

enum class Status { ok, below, none };  // none: nothing to compare against

struct Expectation {
  std::string item;            // "GPU0 PCIe link", "NIC mlx5_0/1 speed", "memory triad (node 0)"
  std::string measured;        // "Gen3 x8", "100 Gb/s", "61.2 GB/s"
  std::string expected = "-";  // "Gen5 x16", ">= 400 Gb/s", ">= 147.5 GB/s"; "-": none
  Status status = Status::none;
  std::string basis;  // where the expected figure comes from
};

std::vector<Expectation> compare(const Profile& profile, const hw::Catalog& catalog);

std::string to_string(Status s);

}  // namespace gf::probe
