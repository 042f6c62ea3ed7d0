#include "sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>

namespace gf::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Event {
  double time;
  std::uint32_t task;
  std::uint32_t version;  // for drains: must match the flow's version; ~0u for completions
  bool operator>(const Event& o) const { return time > o.time; }
};
constexpr std::uint32_t kCompletion = ~0u;

class Simulator {
public:
  Simulator(const TaskGraph& g, std::span<const double> capacity) : g_(g) {
    // The links the tasks use, numbered from 0: a graph on a large cluster touches a small part
    // of its links, and the per-link state below is sized by what is used, not by the cluster.
    const std::size_t n = g.size();
    // Cluster link -> local number, valid where its stamp is this run's (reused across runs on
    // the thread, so nothing of the cluster's size is cleared per run).
    thread_local std::vector<LinkId> local;
    thread_local std::vector<std::uint64_t> stamp;
    thread_local std::uint64_t run = 0;
    if (local.size() < capacity.size()) {
      local.resize(capacity.size());
      stamp.resize(capacity.size(), 0);
    }
    ++run;
    std::vector<LinkId> used;
    path_begin_.reserve(n + 1);
    path_begin_.push_back(0);
    for (TaskId t = 0; t < n; ++t) {
      for (const LinkId l : g.path(t)) {
        if (l >= capacity.size()) throw std::invalid_argument("flow over a link without capacity");
        if (stamp[l] != run) {
          stamp[l] = run;
          local[l] = static_cast<LinkId>(used.size());
          used.push_back(l);
        }
        path_.push_back(local[l]);
      }
      path_begin_.push_back(path_.size());
    }
    capacity_.reserve(used.size());
    for (const LinkId l : used) capacity_.push_back(capacity[l]);
    link_flows_.resize(used.size());
    link_dirty_.assign(used.size(), 0);
    link_seen_.assign(used.size(), 0);
    remaining_cap_.assign(used.size(), 0);
    unfrozen_.assign(used.size(), 0);
    result_.start.assign(n, -1);
    result_.finish.assign(n, -1);
    deps_left_.resize(n);
    remaining_.assign(n, 0);
    rate_.assign(n, 0);
    last_update_.assign(n, 0);
    version_.assign(n, 0);
    active_.assign(n, 0);
    flow_seen_.assign(n, 0);
    flow_frozen_.assign(n, 0);
    for (TaskId t = 0; t < n; ++t) deps_left_[t] = g.dependency_count(t);
  }

  SimResult run() {
    for (TaskId t = 0; t < g_.size(); ++t) {
      if (deps_left_[t] == 0) start(t, 0.0);
    }
    double now = 0;
    while (true) {
      if (!dirty_links_.empty()) recompute(now);
      if (queue_.empty()) break;
      now = queue_.top().time;
      // One batch: every event at this instant (relative tolerance for rounding).
      const double horizon = now + std::max(1e-15, std::fabs(now) * 1e-9);
      while (!queue_.empty() && queue_.top().time <= horizon) {
        const Event e = queue_.top();
        queue_.pop();
        ++result_.events;
        if (e.version == kCompletion) {
          finish(e.task, now);
        } else if (active_[e.task] && e.version == version_[e.task]) {
          drain(e.task, now);
        }
      }
    }
    for (TaskId t = 0; t < g_.size(); ++t) {
      if (result_.finish[t] < 0) throw std::logic_error("task graph has a cycle or an unreachable task");
      result_.makespan = Seconds(std::max(result_.makespan.value(), result_.finish[t]));
    }
    return std::move(result_);
  }

private:
  void start(TaskId t, double now) {
    result_.start[t] = now;
    if (!g_.is_flow(t)) {
      queue_.push({now + g_.duration(t), t, kCompletion});
      return;
    }
    const auto path = path_of(t);
    bool uses_anything = false;
    for (std::size_t i = 0; i < path.size() && !uses_anything; ++i) uses_anything = g_.demand(t, i) > 0;
    if (!uses_anything || g_.bytes(t) <= 0) {  // nothing to move, or work that takes no resource
      queue_.push({now + g_.latency(t), t, kCompletion});
      return;
    }
    remaining_[t] = g_.bytes(t);
    last_update_[t] = now;
    rate_[t] = 0;
    active_[t] = 1;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const LinkId l = path[i];
      if (!(capacity_[l] > 0)) throw std::invalid_argument("flow over a link without capacity");
      if (!(g_.demand(t, i) > 0)) continue;  // a resource the work does not use
      link_flows_[l].push_back({t, g_.demand(t, i)});
      mark_dirty(l);
    }
  }

  void drain(TaskId t, double now) {
    active_[t] = 0;
    remaining_[t] = 0;
    for (const LinkId l : path_of(t)) mark_dirty(l);
    const double lat = g_.latency(t);
    if (lat > 0)
      queue_.push({now + lat, t, kCompletion});
    else
      finish(t, now);
  }

  void finish(TaskId t, double now) {
    result_.finish[t] = now;
    for (const TaskId s : g_.successors(t)) {
      if (--deps_left_[s] == 0) start(s, now);
    }
  }

  void mark_dirty(LinkId l) {
    if (!link_dirty_[l]) {
      link_dirty_[l] = 1;
      dirty_links_.push_back(l);
    }
  }

  // Max-min fair rates for the component of flows reachable from the dirty links.
  void recompute(double now) {
    ++result_.rate_recomputations;
    ++epoch_;
    std::vector<LinkId> links;
    links.swap(dirty_links_);
    for (const LinkId l : links) {
      link_dirty_[l] = 0;
      link_seen_[l] = epoch_;
    }
    std::vector<TaskId> flows;
    for (std::size_t i = 0; i < links.size(); ++i) {
      auto& list = link_flows_[links[i]];
      // Drop finished flows from the list as we pass.
      list.erase(std::remove_if(list.begin(), list.end(), [&](const Use& u) { return !active_[u.task]; }), list.end());
      for (const auto& [f, use] : list) {
        if (flow_seen_[f] == epoch_) continue;
        flow_seen_[f] = epoch_;
        flows.push_back(f);
        for (const LinkId l2 : path_of(f)) {
          if (link_seen_[l2] != epoch_) {
            link_seen_[l2] = epoch_;
            links.push_back(l2);
          }
        }
      }
    }
    // Bring every flow's remaining bytes up to now at its old rate.
    for (const TaskId f : flows) {
      remaining_[f] -= rate_[f] * (now - last_update_[f]);
      if (remaining_[f] < 0) remaining_[f] = 0;
      last_update_[f] = now;
    }
    // Water-filling: repeatedly saturate the link with the smallest fair share.
    // A min-heap on share alone (ties in any order: equal shares freeze at the same rate).
    struct Share {
      double share;
      LinkId link;
    };
    struct Later {
      bool operator()(const Share& a, const Share& b) const { return a.share > b.share; }
    };
    std::vector<Share> storage;
    storage.reserve(links.size() * 4);
    std::priority_queue<Share, std::vector<Share>, Later> heap(Later{}, std::move(storage));
    for (const LinkId l : links) {
      remaining_cap_[l] = capacity_[l];
      unfrozen_[l] = 0;
      for (const auto& [f, use] : link_flows_[l]) unfrozen_[l] += g_.weight(f) * use;
      if (unfrozen_[l] > 0) heap.push({remaining_cap_[l] / unfrozen_[l], l});
    }
    while (!heap.empty()) {
      const auto [share, l] = heap.top();
      heap.pop();
      if (unfrozen_[l] <= 1e-12) continue;
      const double current = std::max(0.0, remaining_cap_[l]) / unfrozen_[l];
      // Shares only grow as flows freeze, so every entry is a lower bound of its link's share.
      // A stale entry goes back with its current share; an entry that is still exact is the
      // true minimum. One entry per link keeps the heap small.
      if (current > share * (1 + 1e-12) + 1e-300) {
        heap.push({current, l});
        continue;
      }
      for (const auto& [f, use] : link_flows_[l]) {
        if (flow_frozen_[f] == epoch_) continue;
        flow_frozen_[f] = epoch_;
        const double w = g_.weight(f);
        // Every unfrozen task progresses at `current` per unit of weight; what it takes of
        // each resource on its path is that rate times its demand there.
        set_rate(f, current * w, now);
        const auto path = path_of(f);
        for (std::size_t i = 0; i < path.size(); ++i) {
          const double d = g_.demand(f, i);
          remaining_cap_[path[i]] -= current * w * d;
          unfrozen_[path[i]] -= w * d;
        }
      }
    }
  }

  void set_rate(TaskId f, double rate, double now) {
    if (rate == rate_[f] && last_update_[f] == now && rate > 0) return;  // the pending drain event still holds
    rate_[f] = rate;
    ++version_[f];
    const double t = rate > 0 ? now + remaining_[f] / rate : kInf;
    if (t < kInf) queue_.push({t, f, version_[f]});
  }

  // A task's path in the simulator's own link numbering.
  [[nodiscard]] std::span<const LinkId> path_of(TaskId t) const {
    return {path_.data() + path_begin_[t], path_begin_[t + 1] - path_begin_[t]};
  }

  const TaskGraph& g_;
  std::vector<double> capacity_;  // by the simulator's link number
  std::vector<LinkId> path_;
  std::vector<std::size_t> path_begin_;
  // The tasks on a link or resource, with what each takes of it per unit of progress.
  struct Use {
    TaskId task;
    double demand;
  };
  std::vector<std::vector<Use>> link_flows_;
  std::vector<std::uint8_t> link_dirty_;
  std::vector<std::uint32_t> link_seen_;  // == epoch_: in the component being recomputed
  std::vector<double> remaining_cap_;
  std::vector<double> unfrozen_;  // sum of weight x demand of the link's flows not yet frozen
  std::vector<LinkId> dirty_links_;
  std::uint32_t epoch_ = 0;

  std::vector<std::uint32_t> deps_left_;
  std::vector<double> remaining_, rate_, last_update_;
  std::vector<std::uint32_t> version_;
  std::vector<std::uint8_t> active_;
  std::vector<std::uint32_t> flow_seen_, flow_frozen_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  SimResult result_;
};

}  // namespace

SimResult simulate(const TaskGraph& graph, std::span<const double> capacity) {
  return Simulator(graph, capacity).run();
}

}  // namespace gf::sim
