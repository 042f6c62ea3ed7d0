#pragma once
// A fixed 64-bit mix (splitmix64's finaliser): deterministic choices that spread evenly, such as
// an ECMP switch's hash of a flow's headers.
#include <cstdint>

namespace gf {

[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace gf
