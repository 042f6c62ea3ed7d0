#include "comm/pattern_tasks.hpp"

#include <algorithm>
#include <functional>
#include <span>
#include <unordered_map>

#include "comm/ecmp_flows.hpp"
#include "comm/pattern.hpp"

namespace gf::comm {

namespace {

struct FlowKey {
  std::vector<topo::LinkId> path;
  double bytes;
};

// A flow as the emitter hands it over, before it is copied into a key: looked up without
// allocating (most edges repeat once per channel, so most look-ups find their key).
struct FlowView {
  std::span<const topo::LinkId> path;
  double bytes;
};

struct FlowKeyHash {
  using is_transparent = void;
  static std::size_t hash(std::span<const topo::LinkId> path, double bytes) {
    std::size_t h = std::hash<double>()(bytes);
    for (const auto l : path) h = h * 1000003u ^ l;
    return h;
  }
  std::size_t operator()(const FlowKey& k) const { return hash(k.path, k.bytes); }
  std::size_t operator()(const FlowView& k) const { return hash(k.path, k.bytes); }
};

struct FlowKeyEqual {
  using is_transparent = void;
  static bool same(std::span<const topo::LinkId> a, double ab, std::span<const topo::LinkId> b, double bb) {
    return ab == bb && std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  bool operator()(const FlowKey& a, const FlowKey& b) const { return same(a.path, a.bytes, b.path, b.bytes); }
  bool operator()(const FlowView& a, const FlowKey& b) const { return same(a.path, a.bytes, b.path, b.bytes); }
  bool operator()(const FlowKey& a, const FlowView& b) const { return same(a.path, a.bytes, b.path, b.bytes); }
};

// The pattern's flows as the fabric places them: through the uplink bundles, or, where the
// switches hash, each queue pair on its own uplink cable (comm/ecmp_flows.hpp).
void emit_placed(const Communicator& c, Op op, Algo algo, double size, double inflate, PatternScope scope,
                 const FlowSink& sink) {
  if (!ecmp_hashed(c)) {
    emit_pattern(c, op, algo, size, inflate, scope, sink);
    return;
  }
  EcmpPlacer placer(c, sink);
  emit_pattern(c, op, algo, size, inflate, scope,
               [&placer](std::span<const topo::LinkId> path, double bytes) { placer(path, bytes); });
}

}  // namespace

PatternTasks add_pattern_flows(sim::TaskGraph& graph, const Communicator& c, Op op, Algo algo, double size,
                               double inflate, long root, std::optional<sim::TaskId> start, long sender) {
  PatternTasks out;
  if (op == Op::alltoall) {
    // Every all-to-all flow has its own pair of end points: nothing to merge, so skip the map.
    emit_placed(c, op, algo, size, inflate, PatternScope{-1, 0, root, &out.connection_seconds, sender},
                [&](std::span<const topo::LinkId> path, double bytes) {
                  const sim::TaskId id = graph.add_flow(path, Bytes(bytes), Seconds(0));
                  if (start) graph.add_dependency(*start, id);
                  out.last.push_back(id);
                });
    return out;
  }
  std::optional<sim::TaskId> barrier = start;
  const int count = phases(op, algo);
  for (int ph = 0; ph < count; ++ph) {
    std::unordered_map<FlowKey, double, FlowKeyHash, FlowKeyEqual> merged;
    double phase_connection = 0;
    emit_placed(c, op, algo, size, inflate, PatternScope{-1, ph, root, &phase_connection, sender},
                [&](std::span<const topo::LinkId> path, double bytes) {
                  if (auto it = merged.find(FlowView{path, bytes}); it != merged.end()) {
                    it->second += 1.0;
                    return;
                  }
                  merged.emplace(FlowKey{std::vector<topo::LinkId>(path.begin(), path.end()), bytes}, 1.0);
                });
    out.connection_seconds += phase_connection;
    // Deterministic order: the map's iteration order depends on the hash, so sort first.
    std::vector<std::pair<const FlowKey*, double>> flows;
    flows.reserve(merged.size());
    for (const auto& kv : merged) flows.push_back({&kv.first, kv.second});
    std::sort(flows.begin(), flows.end(), [](const auto& a, const auto& b) {
      if (a.first->bytes != b.first->bytes) return a.first->bytes < b.first->bytes;
      return a.first->path < b.first->path;
    });
    std::vector<sim::TaskId> ids;
    ids.reserve(flows.size());
    for (const auto& [key, n] : flows) {
      const sim::TaskId id = graph.add_flow(key->path, Bytes(key->bytes * n), Seconds(0), n);
      if (barrier) graph.add_dependency(*barrier, id);
      ids.push_back(id);
    }
    if (ph + 1 < count && !ids.empty()) {
      // A zero-length barrier joins this phase's flows before the next phase starts.
      const sim::TaskId next = graph.add_delay(Seconds(0));
      for (const auto id : ids) graph.add_dependency(id, next);
      barrier = next;
    }
    if (ph + 1 == count) out.last = std::move(ids);
  }
  // A last phase without flows ends when the phases before it end.
  if (out.last.empty() && barrier && barrier != start) out.last.push_back(*barrier);
  return out;
}

}  // namespace gf::comm
