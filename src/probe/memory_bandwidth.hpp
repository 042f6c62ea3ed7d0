#pragma once
// Host memory bandwidth, measured the way STREAM does it: three arrays of doubles well beyond
// the last-level cache, copy (c = a) and triad (a = b + s*c), best of N repetitions with the first
// one dropped, and bytes counted as STREAM counts them (copy 2 arrays, triad 3 arrays; the
// write-allocate reads a cache does on stores are not counted).
#include <vector>

#include "probe/profile.hpp"

namespace gf::probe {

class HwlocTopology;

struct MemoryOptions {
  int threads = 0;       // per measured domain; 0 = one per core
  Bytes array_size{0};   // per array; 0 = max(256 MiB, 4 x last-level cache), bounded by free memory
  int repetitions = 10;  // the first is a warm-up and is not counted
};

// One result per NUMA node when hwloc sees more than one (threads and memory bound to the node),
// else one for the whole machine (numa_node = -1).
std::vector<MemoryResult> measure_memory(const MemoryOptions& options, const HwlocTopology& topology);

// STREAM's rule, bounded: max(256 MiB, 4 x llc) per array, the three arrays together at most a
// sixth of `available` (so the probe never pushes the machine into swap; each array is at most an
// eighteenth), rounded down to 2 MiB.
Bytes stream_array_size(Bytes llc, Bytes available);

}  // namespace gf::probe
