#include "sched/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include <fmt/format.h>

#include "core/error.hpp"

namespace gf::sched {

const char* to_string(JobState s) {
  switch (s) {
    case JobState::waiting: return "waiting";
    case JobState::running: return "running";
    case JobState::done: return "done";
    case JobState::cancelled: return "cancelled";
    case JobState::unschedulable: return "unschedulable";
    case JobState::preempted: return "preempted";
  }
  return "?";
}

std::string never_fits(const ClusterState& cluster, const Job& j) {
  long pods = 0;
  bool model = false, host = false, gpus = false;
  for (int n = 0; n < static_cast<int>(cluster.nodes().size()); ++n) {
    const Node& node = cluster.node(n);
    if (!j.pod.wants_gpu() || j.pod.gpu_models.empty() ||
        std::find(j.pod.gpu_models.begin(), j.pod.gpu_models.end(), node.model) != j.pod.gpu_models.end())
      model = true;
    if (node.cpu_milli >= j.pod.cpu_milli && node.memory_mib >= j.pod.memory_mib) host = true;
    if (!cluster.could_ever_fit(n, j.pod)) continue;
    gpus = true;
    long here = j.pod.gpus > 0 ? static_cast<long>(node.gpus.size()) / j.pod.gpus : 1L << 20;
    if (j.pod.cpu_milli > 0) here = std::min(here, node.cpu_milli / j.pod.cpu_milli);
    if (j.pod.memory_mib > 0) here = std::min(here, node.memory_mib / j.pod.memory_mib);
    pods += here;
    if (pods >= j.pods) return {};
  }
  if (!model) return fmt::format("no node has a GPU model it accepts ({})", join(j.pod.gpu_models, "|"));
  if (!host) return fmt::format("no node has {} CPU milli and {} MiB", j.pod.cpu_milli, j.pod.memory_mib);
  if (!gpus) {
    if (!j.pod.mig.empty()) return fmt::format("no node's GPU offers MIG profile {}", j.pod.mig);
    return fmt::format("no node has {} GPUs with {} CPU milli and {} MiB beside them", j.pod.gpus, j.pod.cpu_milli,
                       j.pod.memory_mib);
  }
  return fmt::format("the whole cluster holds fewer than {} of its pods at once", j.pods);
}

double offered_load(const std::vector<Job>& jobs, long gpus, double time_scale) {
  double first = std::numeric_limits<double>::infinity(), last = 0;
  for (const auto& j : jobs) {
    first = std::min(first, j.submit / time_scale);
    last = std::max(last, j.submit / time_scale);
  }
  const double span = last - first;
  if (!(span > 0) || gpus <= 0) return 0;
  double work = 0;
  for (const auto& j : jobs) {
    const double start = j.submit / time_scale;
    double end = start + j.duration;
    if (j.deadline >= 0) end = std::min(end, j.deadline / time_scale);
    work += j.gpu_demand() * std::max(0.0, std::min(end, last) - start);
  }
  return work / (span * static_cast<double>(gpus));
}

double time_scale_for_load(const std::vector<Job>& jobs, long gpus, double load) {
  // The load grows with the compression (short jobs crowd into a shorter window; long ones
  // already fill it): bisect on the logarithm of the scale.
  double lo = std::log(1e-3), hi = std::log(1e9);
  if (offered_load(jobs, gpus, std::exp(hi)) < load) return -1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (offered_load(jobs, gpus, std::exp(mid)) < load ? lo : hi) = mid;
  }
  return std::exp(hi);
}

namespace {

Distribution distribution(std::vector<double> v) {
  Distribution d;
  d.count = static_cast<long>(v.size());
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  auto at = [&](double p) {  // nearest rank
    const auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  d.median = at(0.5);
  d.p99 = at(0.99);
  d.max = v.back();
  return d;
}

// At one instant: ends first, then arrivals, then deadlines (a pod deleted the moment it was
// created arrives and leaves), then demotions; one scheduling pass follows them all.
enum EventType { kFinish = 0, kArrive = 1, kDeadline = 2, kDemote = 3 };

struct Event {
  double t = 0;
  int type = 0;
  long seq = 0;
  std::size_t job = 0;
  std::uint64_t version = 0;
  bool operator>(const Event& o) const {
    if (t != o.t) return t > o.t;
    if (type != o.type) return type > o.type;
    return seq > o.seq;
  }
};

struct Run {
  double remaining = 0;  // seconds of work at speed 1
  double rate = 1;
  double since = 0;
  std::uint64_t version = 0;
  double attained = 0;  // GPU-seconds received (LAS)
  double demand = 0;    // GPUs
  double waiting_since = 0;
  std::uint64_t failed_release = ~std::uint64_t{0};
  std::uint64_t failed_priority = ~std::uint64_t{0};
  bool promoted = false;
};

class Simulation {
public:
  Simulation(const ClusterState& c, const std::vector<Job>& jobs, const Policy& p, const SimOptions& o)
      : empty_(c), cluster_(c), jobs_(jobs), policy_(p), o_(o), workload_(target_workload(jobs)), meter_(workload_) {
    out_.policy = p.name();
    out_.jobs.resize(jobs.size());
    runs_.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      auto& r = runs_[i];
      r.remaining = jobs[i].duration;
      r.demand = jobs[i].gpu_demand();
      out_.jobs[i].submit = jobs[i].submit / o.time_scale;
      out_.jobs[i].ideal_s = jobs[i].duration;
      push(out_.jobs[i].submit, kArrive, i, 0);
      last_arrival_ = std::max(last_arrival_, out_.jobs[i].submit);
      if (jobs[i].deadline >= 0) push(jobs[i].deadline / o.time_scale, kDeadline, i, 0);
    }
  }

  ScheduleResult run() {
    const std::size_t total = events_.size();
    std::size_t done = 0;
    while (!events_.empty()) {
      const double now = events_.top().t;
      bool changed = false;
      while (!events_.empty() && events_.top().t == now) {
        const Event e = events_.top();
        events_.pop();
        ++done;
        changed |= handle(e, now);
      }
      if (changed) {
        pass(now);
        if (o_.runtime) respeed(now);
        record(now);
      }
      if (o_.progress && (done & 1023) == 0)
        o_.progress(std::min(1.0, static_cast<double>(done) / static_cast<double>(total)));
    }
    finish_metrics();
    return std::move(out_);
  }

private:
  void push(double t, EventType type, std::size_t job, std::uint64_t version) {
    events_.push({t, type, seq_++, job, version});
  }

  // Work done since `since` at the present rate.
  void advance(std::size_t j, double now) {
    auto& r = runs_[j];
    const double dt = now - r.since;
    r.remaining = std::max(0.0, r.remaining - dt * r.rate);
    r.attained += dt * r.demand;
    out_.jobs[j].ran_s += dt;
    r.since = now;
  }

  void schedule_end(std::size_t j, double now) {
    auto& r = runs_[j];
    ++r.version;
    push(now + r.remaining / r.rate, kFinish, j, r.version);
    if (policy_.queueing() == Queueing::las && r.demand > 0) {
      for (double th : o_.las.thresholds)
        if (r.attained < th) {
          // Rounding can leave a job a hair short of a threshold at the time it should cross
          // it; a crossing that would not move the clock is taken as done.
          const double at = now + (th - r.attained) / r.demand;
          if (at > now)
            push(at, kDemote, j, r.version);
          else
            r.attained = th;
          if (at > now) break;
        }
    }
  }

  bool handle(const Event& e, double now) {
    auto& out = out_.jobs[e.job];
    auto& r = runs_[e.job];
    switch (e.type) {
      case kArrive: {
        const std::string why = never_fits(empty_, jobs_[e.job]);
        if (!why.empty()) {
          out.state = JobState::unschedulable;
          out.why = why;
          return false;
        }
        out.state = JobState::waiting;
        r.waiting_since = now;
        waiting_.push_back(e.job);
        return true;
      }
      case kFinish:
        if (out.state != JobState::running || e.version != r.version) return false;
        stop(e.job, now, JobState::done);
        return true;
      case kDeadline:
        if (const auto it = std::find(waiting_.begin(), waiting_.end(), e.job); it != waiting_.end()) {
          out.state = JobState::cancelled;
          out.end = now;
          waiting_.erase(it);
          return true;
        }
        if (out.state == JobState::running) {
          stop(e.job, now, JobState::done);  // deleted at the time the trace says
          return true;
        }
        return false;
      case kDemote:
        if (out.state != JobState::running || e.version != r.version) return false;
        advance(e.job, now);
        ++priority_version_;
        schedule_end(e.job, now);
        return true;
      default: return false;
    }
  }

  void stop(std::size_t j, double now, JobState state) {
    advance(j, now);
    auto& out = out_.jobs[j];
    for (const auto& pod : out.placement) cluster_.release(jobs_[j].pod, pod);
    ++release_version_;
    out.state = state;
    out.end = now;
    running_.erase(std::find(running_.begin(), running_.end(), j));
    runs_changed_ = true;
  }

  std::optional<Placement> place(ClusterState& c, std::size_t j, double now) {
    return place_job(c, jobs_[j], policy_, workload_, now);
  }

  // Cluster-wide upper bounds, for skipping jobs that cannot fit anywhere without looking.
  struct Maxima {
    int whole = 0, share = 0;
    long cpu = 0, memory = 0;
  };
  Maxima maxima() const {
    Maxima m;
    for (const auto& n : cluster_.nodes()) {
      m.whole = std::max(m.whole, n.whole_free());
      for (const auto& g : n.gpus)
        if (!g.mig)
          m.share = std::max(m.share, g.free_milli);
        else
          m.share = std::max(m.share, 1);  // MIG GPUs: leave the look to the options
      m.cpu = std::max(m.cpu, n.cpu_free);
      m.memory = std::max(m.memory, n.memory_free);
    }
    return m;
  }
  static bool could(const Maxima& m, const PodRequest& p) {
    if (p.cpu_milli > m.cpu || p.memory_mib > m.memory) return false;
    if (p.gpus > m.whole) return false;
    if (p.share_milli > m.share) return false;
    return true;
  }

  bool start(std::size_t j, double now) {
    auto placed = place(cluster_, j, now);
    if (!placed) {
      if (!jobs_[j].pod.mig.empty() && out_.jobs[j].reconfigure.empty()) out_.jobs[j].reconfigure = recut_hint(j);
      return false;
    }
    begin(j, now, std::move(*placed));
    return true;
  }

  void begin(std::size_t j, double now, Placement placed) {
    auto& out = out_.jobs[j];
    auto& r = runs_[j];
    out.placement = std::move(placed);
    out.state = JobState::running;
    if (out.start < 0) out.start = now;
    r.since = now;
    r.rate = 1;
    r.promoted = false;
    if (o_.runtime && o_.runtime->models(jobs_[j])) {
      r.rate = o_.runtime->speed(j, out.placement, neighbours(j));
      runs_changed_ = true;
    }
    running_.push_back(j);
    schedule_end(j, now);
  }

  // A MIG request that waits although a GPU would take it if its instances were re-created at
  // other starts (which needs them idle): which GPU, and what is on it.
  std::string recut_hint(std::size_t j) const {
    const PodRequest& p = jobs_[j].pod;
    for (int n = 0; n < static_cast<int>(cluster_.nodes().size()); ++n) {
      const Node& node = cluster_.node(n);
      if (!node.mig_table || !cluster_.host_fits(n, p)) continue;
      const auto* prof = node.mig_table->find(p.mig);
      if (!prof) continue;
      const int profile = static_cast<int>(prof - node.mig_table->profiles.data());
      for (std::size_t g = 0; g < node.gpus.size(); ++g)
        if (node.gpus[g].mig && node.gpus[g].mig->fits_after_repack(profile))
          return fmt::format("{} GPU {} would take it if its instances ({}) were re-created at other starts", node.name,
                             g, describe(*node.mig_table, node.gpus[g].mig->instances()));
    }
    return {};
  }

  std::vector<std::pair<std::size_t, const Placement*>> neighbours(std::size_t j) const {
    std::vector<std::pair<std::size_t, const Placement*>> out;
    for (std::size_t k : running_)
      if (k != j && o_.runtime->models(jobs_[k])) out.emplace_back(k, &out_.jobs[k].placement);
    return out;
  }

  void respeed(double now) {
    if (!runs_changed_) return;
    runs_changed_ = false;
    for (std::size_t j : running_) {
      if (!o_.runtime->models(jobs_[j])) continue;
      const double rate = o_.runtime->speed(j, out_.jobs[j].placement, neighbours(j));
      if (std::abs(rate - runs_[j].rate) < 1e-9) continue;
      advance(j, now);
      runs_[j].rate = rate;
      schedule_end(j, now);
    }
  }

  void remove_waiting(std::size_t j) { waiting_.erase(std::find(waiting_.begin(), waiting_.end(), j)); }

  void pass(double now) {
    switch (policy_.queueing()) {
      case Queueing::skip: pass_skip(now); break;
      case Queueing::fifo: pass_fifo(now); break;
      case Queueing::backfill: pass_backfill(now); break;
      case Queueing::las: pass_las(now); break;
    }
  }

  void pass_skip(double now) {
    const Maxima m = maxima();
    std::vector<std::size_t> still;
    for (std::size_t j : waiting_) {
      auto& r = runs_[j];
      if (r.failed_release == release_version_ || !could(m, jobs_[j].pod) || !start(j, now)) {
        r.failed_release = release_version_;
        still.push_back(j);
      }
    }
    waiting_ = std::move(still);
  }

  void pass_fifo(double now) {
    while (!waiting_.empty()) {
      const std::size_t j = waiting_.front();
      if (runs_[j].failed_release == release_version_ || !start(j, now)) {
        runs_[j].failed_release = release_version_;
        return;
      }
      waiting_.erase(waiting_.begin());
    }
  }

  void pass_backfill(double now) {
    while (!waiting_.empty()) {
      const std::size_t head = waiting_.front();
      if (runs_[head].failed_release != release_version_ && start(head, now)) {
        waiting_.erase(waiting_.begin());
        continue;
      }
      runs_[head].failed_release = release_version_;
      // The head's reservation: when enough GPUs will be free, counting running jobs' ends.
      const double free_now =
          static_cast<double>(cluster_.gpu_count()) - static_cast<double>(cluster_.allocated_milli()) / 1000;
      double free = free_now;
      std::vector<std::pair<double, double>> ends;  // (end, GPUs)
      for (std::size_t k : running_) ends.emplace_back(now + runs_[k].remaining / runs_[k].rate, runs_[k].demand);
      std::sort(ends.begin(), ends.end());
      const double need = runs_[head].demand;
      double shadow = std::numeric_limits<double>::infinity();
      for (const auto& [t, g] : ends) {
        if (free >= need) break;
        free += g;
        shadow = t;
      }
      if (free < need) shadow = std::numeric_limits<double>::infinity();
      if (need <= free_now)
        shadow = std::min(shadow, now);  // it fits by count but not by shape: no later job may take its GPUs
      double extra = free - need;
      const Maxima m = maxima();
      std::vector<std::size_t> still{head};
      for (std::size_t i = 1; i < waiting_.size(); ++i) {
        const std::size_t j = waiting_[i];
        auto& r = runs_[j];
        const bool ends_first = now + r.remaining <= shadow;
        const bool spare = r.demand <= extra;
        if ((ends_first || spare) && r.failed_release != release_version_ && could(m, jobs_[j].pod) && start(j, now)) {
          if (!ends_first) extra -= r.demand;
          continue;
        }
        if (!(ends_first || spare)) {
          still.push_back(j);  // held back by the reservation, not by the cluster
          continue;
        }
        r.failed_release = release_version_;
        still.push_back(j);
      }
      waiting_ = std::move(still);
      return;
    }
  }

  int queue_of(std::size_t j) const {
    const auto& r = runs_[j];
    if (r.promoted) return 0;
    int q = 0;
    for (double th : o_.las.thresholds)
      if (r.attained >= th) ++q;
    return q;
  }

  static bool preemptible(const Job& j) { return j.qos != "LS" && j.qos != "Guaranteed"; }

  void pass_las(double now) {
    // Starvation: a job that has waited knob x as long as it ran moves to the first queue.
    if (o_.las.promote_knob > 0)
      for (std::size_t j : waiting_) {
        auto& r = runs_[j];
        if (!r.promoted && out_.jobs[j].ran_s > 0 &&
            now - r.waiting_since >= o_.las.promote_knob * out_.jobs[j].ran_s) {
          r.promoted = true;
          ++priority_version_;
        }
      }
    auto before = [&](std::size_t a, std::size_t b) {
      const int qa = queue_of(a), qb = queue_of(b);
      if (qa != qb) return qa < qb;
      return out_.jobs[a].submit != out_.jobs[b].submit ? out_.jobs[a].submit < out_.jobs[b].submit : a < b;
    };
    std::stable_sort(waiting_.begin(), waiting_.end(), before);
    const Maxima m = maxima();
    std::vector<std::size_t> still;
    for (std::size_t w = 0; w < waiting_.size(); ++w) {
      const std::size_t j = waiting_[w];
      auto& r = runs_[j];
      const bool tried = r.failed_release == release_version_ && r.failed_priority == priority_version_;
      if (!tried && could(m, jobs_[j].pod) && start(j, now)) continue;
      if (!tried && preempt_for(j, now)) continue;
      r.failed_release = release_version_;
      r.failed_priority = priority_version_;
      still.push_back(j);
    }
    waiting_ = std::move(still);
  }

  // Preempts running jobs of lower queues, the lowest first, when that makes room for `j`.
  bool preempt_for(std::size_t j, double now) {
    const int q = queue_of(j);
    std::vector<std::size_t> victims;
    for (std::size_t k : running_)
      if (preemptible(jobs_[k]) && queue_of(k) > q) victims.push_back(k);
    if (victims.empty()) return false;
    std::sort(victims.begin(), victims.end(), [&](std::size_t a, std::size_t b) {
      const int qa = queue_of(a), qb = queue_of(b);
      if (qa != qb) return qa > qb;
      return out_.jobs[a].submit > out_.jobs[b].submit;
    });
    ClusterState trial = cluster_;
    std::size_t used = 0;
    std::optional<Placement> fits;
    for (; used < victims.size() && !fits; ++used) {
      for (const auto& pod : out_.jobs[victims[used]].placement) trial.release(jobs_[victims[used]].pod, pod);
      fits = place(trial, j, now);
    }
    if (!fits) return false;
    for (std::size_t v = 0; v < used; ++v) {
      const std::size_t k = victims[v];
      stop(k, now, JobState::preempted);
      auto& out = out_.jobs[k];
      out.state = JobState::waiting;
      out.end = -1;
      ++out.preemptions;
      runs_[k].remaining += o_.restart_s;  // checkpoint and restart
      runs_[k].waiting_since = now;
      runs_[k].failed_release = ~std::uint64_t{0};
      waiting_.push_back(k);
    }
    return start(j, now);
  }

  void record(double now) {
    TimelinePoint p;
    p.t = now;
    p.allocated_gpus = static_cast<double>(cluster_.allocated_milli()) / 1000;
    p.gpus_in_use = cluster_.gpus_in_use();
    p.running = static_cast<long>(running_.size());
    p.waiting = static_cast<long>(waiting_.size());
    p.fragmented_gpus = meter_.gpus(cluster_);
    const double free = static_cast<double>(cluster_.gpu_count()) - p.allocated_gpus;
    bool stranded = false;
    for (std::size_t j : waiting_)
      if (jobs_[j].pod.wants_gpu() && runs_[j].demand <= free) {
        stranded = true;
        break;
      }
    // Integrate the previous point up to now, inside the arrival window (after the last arrival
    // the cluster only drains, and a trace's few long jobs would dilute every average).
    if (have_last_ && last_.t < last_arrival_) {
      const double dt = std::min(now, last_arrival_) - last_.t;
      acc_alloc_ += last_.allocated_gpus * dt;
      acc_use_ += static_cast<double>(last_.gpus_in_use) * dt;
      acc_frag_ += last_.fragmented_gpus * dt;
      acc_stranded_ += last_stranded_ * dt;
      acc_t_ += dt;
    }
    last_ = p;
    last_stranded_ = stranded ? free : 0;
    have_last_ = true;
    if (!o_.timeline) return;
    if (!out_.timeline.empty() && out_.timeline.back().t == now)
      out_.timeline.back() = p;
    else
      out_.timeline.push_back(p);
  }

  void finish_metrics() {
    auto& m = out_.metrics;
    m.jobs = static_cast<long>(jobs_.size());
    std::vector<double> jct, queue, slow;
    double first = std::numeric_limits<double>::infinity(), last = 0;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      const auto& o = out_.jobs[i];
      first = std::min(first, o.submit);
      m.preemptions += o.preemptions;
      if (o.state == JobState::unschedulable) ++m.unschedulable;
      if (!o.reconfigure.empty()) ++m.mig_recut;
      if (o.state == JobState::cancelled) {
        ++m.cancelled;
        if (o.start < 0) ++m.never_started;
      }
      if (o.start >= 0) queue.push_back(o.start - o.submit);
      if (o.state == JobState::done) {
        ++m.completed;
        jct.push_back(o.end - o.submit);
        last = std::max(last, o.end);
        if (o.ideal_s > 0 && jobs_[i].deadline < 0) slow.push_back(o.ran_s / o.ideal_s);
      }
    }
    m.makespan_s = last > first ? last - first : 0;
    m.jct_s = distribution(jct);
    m.queue_s = distribution(queue);
    m.slowdown = distribution(slow);
    const double gpus = static_cast<double>(cluster_.gpu_count());
    if (acc_t_ > 0 && gpus > 0) {
      m.allocation = acc_alloc_ / acc_t_ / gpus;
      m.gpus_in_use = acc_use_ / acc_t_;
      m.fragmented_gpus = acc_frag_ / acc_t_;
      m.stranded_gpus = acc_stranded_ / acc_t_;
    }
  }

  const ClusterState empty_;
  ClusterState cluster_;
  const std::vector<Job>& jobs_;
  const Policy& policy_;
  SimOptions o_;
  TargetWorkload workload_;
  FragmentationMeter meter_;
  ScheduleResult out_;
  std::vector<Run> runs_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<std::size_t> waiting_, running_;
  long seq_ = 0;
  std::uint64_t release_version_ = 0, priority_version_ = 0;
  bool runs_changed_ = false;
  TimelinePoint last_;
  double last_stranded_ = 0;
  bool have_last_ = false;
  double last_arrival_ = 0;
  double acc_alloc_ = 0, acc_use_ = 0, acc_frag_ = 0, acc_stranded_ = 0, acc_t_ = 0;
};

}  // namespace

ScheduleResult simulate(const ClusterState& cluster, const std::vector<Job>& jobs, const Policy& policy,
                        const SimOptions& options) {
  if (!(options.time_scale > 0)) throw std::invalid_argument("simulate: time_scale must be positive");
  Simulation s(cluster, jobs, policy, options);
  return s.run();
}

}  // namespace gf::sched
