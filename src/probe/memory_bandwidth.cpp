#include "probe/memory_bandwidth.hpp"

#include <hwloc.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "probe/hwloc_topology.hpp"
#include "probe/sysfs.hpp"

namespace gf::probe {

namespace {

constexpr double kMiB = 1048576.0;
constexpr double kStreamArrays = 3;  // a, b and c
constexpr double kMinArray = 256 * kMiB;
constexpr double kTriadScalar = 3.0;  // STREAM's scalar

using Clock = std::chrono::steady_clock;

// The arrays of one measured domain, bound to a NUMA node when `nodeset` is given.
class Arrays {
public:
  Arrays(hwloc_topology_t topo, hwloc_const_nodeset_t nodeset, std::size_t count) : topo_(topo) {
    // aligned_alloc wants a multiple of the alignment; the tail beyond `count` is never touched.
    constexpr std::size_t kAlign = 2 * 1024 * 1024;
    bytes_ = (count * sizeof(double) + kAlign - 1) / kAlign * kAlign;
    const std::size_t bytes = bytes_;
    for (auto*& p : ptr_) {
      void* mem = nodeset ? hwloc_alloc_membind(topo, bytes, nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET)
                          : std::aligned_alloc(kAlign, bytes);
      if (!mem) {
        release();
        throw std::runtime_error("cannot allocate the STREAM arrays");
      }
      p = static_cast<double*>(mem);
    }
    bound_ = nodeset != nullptr;
  }
  ~Arrays() { release(); }
  Arrays(const Arrays&) = delete;
  Arrays& operator=(const Arrays&) = delete;

  double* a() const { return ptr_[0]; }
  double* b() const { return ptr_[1]; }
  double* c() const { return ptr_[2]; }

private:
  void release() {
    for (auto*& p : ptr_) {
      if (!p) continue;
      if (bound_) {
        hwloc_free(topo_, p, bytes_);
      } else {
        std::free(p);
      }
      p = nullptr;
    }
  }
  hwloc_topology_t topo_;
  std::size_t bytes_ = 0;
  bool bound_ = false;
  double* ptr_[3] = {nullptr, nullptr, nullptr};
};

struct RepTimes {
  std::vector<Clock::time_point> start, end;
};

double span_seconds(const RepTimes& t) {
  const auto first = *std::min_element(t.start.begin(), t.start.end());
  const auto last = *std::max_element(t.end.begin(), t.end.end());
  return std::chrono::duration<double>(last - first).count();
}

// Runs copy and triad on `threads` workers, each bound to one of `cpusets` (if any), over its own
// contiguous slice; the slice is first touched by the same worker so its pages are local.
MemoryResult run_domain(hwloc_topology_t topo, hwloc_const_nodeset_t nodeset,
                        const std::vector<hwloc_bitmap_t>& cpusets, int threads, std::size_t count, int reps) {
  Arrays arr(topo, nodeset, count);
  std::vector<RepTimes> copy(static_cast<std::size_t>(reps)), triad(static_cast<std::size_t>(reps));
  for (auto& r : copy) r.start.resize(threads), r.end.resize(threads);
  for (auto& r : triad) r.start.resize(threads), r.end.resize(threads);
  std::barrier sync(threads);
  auto worker = [&](int t) {
    if (!cpusets.empty()) {
      hwloc_set_cpubind(topo, cpusets[static_cast<std::size_t>(t) % cpusets.size()], HWLOC_CPUBIND_THREAD);
    }
    const std::size_t lo = count * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
    const std::size_t hi = count * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
    double* const a = arr.a();
    double* const b = arr.b();
    double* const c = arr.c();
    for (std::size_t i = lo; i < hi; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.0;
    }
    for (int r = 0; r < reps; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      const auto tu = static_cast<std::size_t>(t);
      sync.arrive_and_wait();
      copy[ru].start[tu] = Clock::now();
      for (std::size_t i = lo; i < hi; ++i) c[i] = a[i];
      copy[ru].end[tu] = Clock::now();
      sync.arrive_and_wait();
      triad[ru].start[tu] = Clock::now();
      for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] + kTriadScalar * c[i];
      triad[ru].end[tu] = Clock::now();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(worker, t);
  }
  // STREAM's own check: after `reps` rounds of c = a; a = 2 + 3c, every a is the same value.
  double expect = 1.0;
  for (int r = 0; r < reps; ++r) expect = 2.0 + kTriadScalar * expect;
  for (std::size_t i = 0; i < count; i += count / 64 + 1) {
    if (std::abs(arr.a()[i] - expect) > 1e-8 * expect) throw std::runtime_error("STREAM arrays failed validation");
  }
  const double bytes = static_cast<double>(count) * sizeof(double);
  MemoryResult res;
  res.threads = threads;
  res.array_size = Bytes(bytes);
  res.repetitions = reps;
  for (int r = 1; r < reps; ++r) {  // repetition 0 is the warm-up, as in STREAM
    const auto ru = static_cast<std::size_t>(r);
    res.copy = std::max(res.copy, Bandwidth(2 * bytes / span_seconds(copy[ru])));
    res.triad = std::max(res.triad, Bandwidth(3 * bytes / span_seconds(triad[ru])));
  }
  return res;
}

Bytes llc_inside(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
  // The last-level data or unified caches inside `set`, summed (one L3 per CCX on AMD parts).
  for (hwloc_obj_type_t type : {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE}) {
    const int n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, type);
    if (n <= 0) continue;
    double total = 0;
    for (int i = 0; i < n; ++i) {
      total += static_cast<double>(
          hwloc_get_obj_inside_cpuset_by_type(topo, set, type, static_cast<unsigned>(i))->attr->cache.size);
    }
    return Bytes(total);
  }
  return Bytes(0);
}

// One cpuset per core, freed on scope exit.
struct CoreSets {
  std::vector<hwloc_bitmap_t> sets;
  CoreSets() = default;
  CoreSets(const CoreSets&) = delete;
  CoreSets& operator=(const CoreSets&) = delete;
  ~CoreSets() {
    for (auto s : sets) hwloc_bitmap_free(s);
  }
};

void core_cpusets(hwloc_topology_t topo, hwloc_const_cpuset_t set, CoreSets& out_sets) {
  auto& out = out_sets.sets;
  const int n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    hwloc_bitmap_t s = hwloc_bitmap_dup(core->cpuset);
    hwloc_bitmap_singlify(s);  // one hardware thread per core, so two workers never share a core
    out.push_back(s);
  }
}

}  // namespace

Bytes stream_array_size(Bytes llc, Bytes available) {
  double size = std::max(kMinArray, 4 * llc.value());
  // The three arrays together take at most a sixth of what is available.
  if (available.value() > 0) size = std::min(size, available.value() / (6 * kStreamArrays));
  const double granule = 2 * kMiB;
  return Bytes(std::max(granule, std::floor(size / granule) * granule));
}

std::vector<MemoryResult> measure_memory(const MemoryOptions& options, const HwlocTopology& topology) {
  hwloc_topology_t topo = topology.handle();
  const int reps = std::max(2, options.repetitions);
  const Bytes available = sysfs::memory_available("/");
  std::vector<MemoryResult> out;
  const int nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  if (nodes > 1) {
    for (int i = 0; i < nodes; ++i) {
      hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
      CoreSets holder;
      core_cpusets(topo, node->cpuset, holder);
      const auto& sets = holder.sets;
      if (sets.empty()) continue;  // memory-only node (CXL, HBM without cores): nothing to run there
      // Bounded by this node's memory as well as by what the whole machine has free.
      const Bytes node_free(std::min(available.value() > 0 ? available.value() : 1e300,
                                     static_cast<double>(node->attr->numanode.local_memory)));
      const Bytes size = options.array_size.value() > 0 ? options.array_size
                                                        : stream_array_size(llc_inside(topo, node->cpuset), node_free);
      const int threads = options.threads > 0 ? options.threads : static_cast<int>(sets.size());
      auto r =
          run_domain(topo, node->nodeset, sets, threads, static_cast<std::size_t>(size.value() / sizeof(double)), reps);
      r.numa_node = static_cast<int>(node->os_index);
      r.llc = llc_inside(topo, node->cpuset);
      out.push_back(r);
    }
    if (!out.empty()) return out;
  }
  const hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
  CoreSets holder;
  core_cpusets(topo, all, holder);
  const auto& sets = holder.sets;
  const Bytes size =
      options.array_size.value() > 0 ? options.array_size : stream_array_size(llc_inside(topo, all), available);
  const int threads = options.threads > 0 ? options.threads : std::max<int>(1, static_cast<int>(sets.size()));
  auto r = run_domain(topo, nullptr, sets, threads, static_cast<std::size_t>(size.value() / sizeof(double)), reps);
  r.llc = llc_inside(topo, all);
  out.push_back(r);
  return out;
}

}  // namespace gf::probe
