#include "sched/mig_layout.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "hw/mig_data.hpp"

namespace gf::sched {

namespace {

constexpr int kComputeSlices = 7;

std::uint8_t slices(int start, int count) { return static_cast<std::uint8_t>(((1u << count) - 1u) << start); }

// The placement view of hw::mig_data() (which checks that every start fits in the 8 slices).
const std::vector<MigTable>& tables() {
  static const std::vector<MigTable> all = [] {
    std::vector<MigTable> out;
    for (const auto& g : hw::mig_data()) {
      MigTable t;
      t.gpu = g.gpu;
      for (const auto& p : g.profiles)
        t.profiles.push_back({p.name, p.compute_slices, p.memory_slices, p.max_instances, p.starts});
      out.push_back(std::move(t));
    }
    return out;
  }();
  return all;
}

}  // namespace

const MigProfileSlots* MigTable::find(const std::string& name) const {
  for (const auto& p : profiles)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string> MigTable::names() const {
  std::vector<std::string> out;
  for (const auto& p : profiles) out.push_back(p.name);
  return out;
}

const MigTable* mig_table(const std::string& gpu) {
  for (const auto& t : tables())
    if (t.gpu == gpu) return &t;
  return nullptr;
}

std::vector<std::string> mig_gpus() {
  std::vector<std::string> out;
  for (const auto& t : tables()) out.push_back(t.gpu);
  return out;
}

bool MigGpu::free_at(const MigProfileSlots& p, int start) const {
  return (mask_ & slices(start, p.memory_slices)) == 0;
}

std::optional<int> MigGpu::fit(int profile) const {
  const auto& p = table_->profiles[static_cast<std::size_t>(profile)];
  if (compute_ + p.compute_slices > kComputeSlices) return std::nullopt;
  const auto same =
      std::count_if(instances_.begin(), instances_.end(), [&](const MigInstance& i) { return i.profile == profile; });
  if (same >= p.max_instances) return std::nullopt;
  for (int s : p.starts)
    if (free_at(p, s)) return s;
  return std::nullopt;
}

int MigGpu::add(int profile, int start) {
  const auto& p = table_->profiles[static_cast<std::size_t>(profile)];
  mask_ = static_cast<std::uint8_t>(mask_ | slices(start, p.memory_slices));
  compute_ += p.compute_slices;
  instances_.push_back({profile, start});
  return static_cast<int>(instances_.size()) - 1;
}

void MigGpu::remove(int profile, int start) {
  const auto it = std::find_if(instances_.begin(), instances_.end(),
                               [&](const MigInstance& i) { return i.profile == profile && i.start == start; });
  if (it == instances_.end()) throw std::logic_error("MigGpu::remove: no such instance");
  const auto& p = table_->profiles[static_cast<std::size_t>(profile)];
  mask_ = static_cast<std::uint8_t>(mask_ & ~slices(start, p.memory_slices));
  compute_ -= p.compute_slices;
  instances_.erase(it);
}

bool MigGpu::fits_after_repack(int profile) const {
  if (fit(profile)) return false;  // it fits as things lie: nothing to reconfigure
  const auto& want = table_->profiles[static_cast<std::size_t>(profile)];
  if (compute_ + want.compute_slices > kComputeSlices) return false;
  std::vector<int> all;
  for (const auto& i : instances_) all.push_back(i.profile);
  all.push_back(profile);
  std::map<int, int> count;
  for (int p : all)
    if (++count[p] > table_->profiles[static_cast<std::size_t>(p)].max_instances) return false;
  // Largest first; at most 7 instances with at most 7 starts each, so a plain search is cheap.
  std::sort(all.begin(), all.end(), [&](int a, int b) {
    return table_->profiles[static_cast<std::size_t>(a)].memory_slices >
           table_->profiles[static_cast<std::size_t>(b)].memory_slices;
  });
  auto place = [&](auto&& self, std::size_t i, std::uint8_t mask) -> bool {
    if (i == all.size()) return true;
    const auto& p = table_->profiles[static_cast<std::size_t>(all[i])];
    for (int s : p.starts) {
      const std::uint8_t m = slices(s, p.memory_slices);
      if ((mask & m) == 0 && self(self, i + 1, static_cast<std::uint8_t>(mask | m))) return true;
    }
    return false;
  };
  return place(place, 0, 0);
}

namespace {

// How many (profile, start) pairs would still be open on a GPU with this mask: the start that
// keeps the most of them open leaves the most room for what comes next.
int openings(const MigTable& t, std::uint8_t mask) {
  int n = 0;
  for (const auto& p : t.profiles)
    for (int s : p.starts)
      if ((mask & slices(s, p.memory_slices)) == 0) ++n;
  return n;
}

}  // namespace

PackResult pack_mig(const MigTable& table, const std::vector<std::string>& requests, int gpus, MigStrategy strategy) {
  if (gpus < 1) throw InputError({}, "--gpus", fmt::format("{} GPUs to pack", gpus), "1 or more");
  std::vector<int> profile_of;
  for (const auto& r : requests) {
    const auto* p = table.find(r);
    if (!p)
      throw InputError({}, "--mig", fmt::format("the {} has no MIG profile '{}'", table.gpu, r), join(table.names()));
    profile_of.push_back(static_cast<int>(p - table.profiles.data()));
  }
  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& pa = table.profiles[static_cast<std::size_t>(profile_of[a])];
    const auto& pb = table.profiles[static_cast<std::size_t>(profile_of[b])];
    return std::pair(pa.memory_slices, pa.compute_slices) > std::pair(pb.memory_slices, pb.compute_slices);
  });
  std::vector<MigGpu> state(static_cast<std::size_t>(gpus), MigGpu(table));
  PackResult out;
  out.placed_gpu.assign(requests.size(), -1);
  for (std::size_t r : order) {
    const int profile = profile_of[r];
    const auto& p = table.profiles[static_cast<std::size_t>(profile)];
    // Best fit: the GPU with the fewest free compute slices that still takes it, at the start
    // that keeps the most openings.
    int best_gpu = -1, best_start = -1, best_free = 1 << 20, best_open = -1;
    for (int g = 0; g < gpus; ++g) {
      const auto& gpu = state[static_cast<std::size_t>(g)];
      if (strategy == MigStrategy::single && !gpu.empty() && gpu.instances().front().profile != profile) continue;
      if (!gpu.fit(profile)) continue;
      const int free = kComputeSlices - gpu.compute_used();
      for (int s : p.starts) {
        const std::uint8_t m = slices(s, p.memory_slices);
        if (gpu.memory_mask() & m) continue;
        const int open = openings(table, static_cast<std::uint8_t>(gpu.memory_mask() | m));
        if (free < best_free || (free == best_free && open > best_open)) {
          best_gpu = g, best_start = s, best_free = free, best_open = open;
        }
      }
    }
    if (best_gpu >= 0) {
      state[static_cast<std::size_t>(best_gpu)].add(profile, best_start);
      out.placed_gpu[r] = best_gpu;
      continue;
    }
    ++out.unplaced;
    for (int g = 0; g < gpus; ++g) {
      const auto& gpu = state[static_cast<std::size_t>(g)];
      if (strategy == MigStrategy::single && !gpu.empty() && gpu.instances().front().profile != profile) continue;
      if (gpu.fits_after_repack(profile)) {
        out.reconfigure.push_back(
            {r, g,
             fmt::format(
                 "{} fits on GPU {} if its instances ({}) are re-created at other starts, which needs them idle",
                 p.name, g, describe(table, gpu.instances()))});
        break;
      }
    }
  }
  for (const auto& g : state) out.gpus.push_back(g.instances());
  return out;
}

std::string describe(const MigTable& table, const std::vector<MigInstance>& instances) {
  auto sorted = instances;
  std::sort(sorted.begin(), sorted.end(), [](const MigInstance& a, const MigInstance& b) { return a.start < b.start; });
  std::string out;
  for (const auto& i : sorted) {
    if (!out.empty()) out += ' ';
    out += fmt::format("{}@{}", table.profiles[static_cast<std::size_t>(i.profile)].name, i.start);
  }
  return out.empty() ? "empty" : out;
}

}  // namespace gf::sched
