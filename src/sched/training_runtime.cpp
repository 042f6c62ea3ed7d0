#include "sched/training_runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>

#include "core/error.hpp"
#include "work/model_library.hpp"
#include "work/parallel_layout.hpp"

namespace gf::sched {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// The trace's column for a training-model flag, so that an error names what the user wrote.
std::string column_of(const std::string& flag) {
  if (flag == "--tp") return "tp";
  if (flag == "--pp") return "pp";
  if (flag == "--global-batch") return "global_batch";
  if (flag == "--micro-batch") return "micro_batch";
  if (flag == "--dp" || flag == "--gpus" || flag == "placement") return "gpus";
  return "model";
}

bool intersects(const std::vector<long>& a, const std::vector<long>& b) {  // both sorted
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    if (*i < *j)
      ++i;
    else
      ++j;
  }
  return false;
}

// Where a group's traffic can meet another's: the nodes its GPUs are on, and the leaf switches
// of those nodes' NICs when it spans nodes (inside one node it never reaches the fabric).
struct Footprint {
  std::vector<long> nodes;
  std::vector<long> leaves;
};

}  // namespace

struct TrainingRuntime::Shape {
  work::ModelSpec model;
  work::TrainOptions options;  // layout, memory and batch; the placement is set per pricing
  int pods = 0;
  int pod_gpus = 0;
  std::vector<long> compact;  // rank -> GPU at the compact placement; empty: none exists
  const Priced* ideal = nullptr;
};

struct TrainingRuntime::Priced {
  std::size_t id = 0;  // creation order: a deterministic order for cache keys
  double step_s = 0;
  double dp_comm_s = 0;  // the gradient reductions' own times, added up
  double exposed_s = 0;  // what of them the step waits for
  double duty = 0;       // the share of its step its gradient traffic is on the links
  comm::Op op = comm::Op::all_reduce;
  double bucket_bytes = 0;
  // The representative data-parallel group (rank 0's) first, then this job's other groups that
  // share its nodes: what train_step priced together.
  std::vector<std::vector<long>> mine;
  Footprint rep;                          // of the representative group
  std::vector<std::vector<long>> groups;  // every data-parallel group of 2 or more ranks
  std::vector<Footprint> group_prints;
  Footprint job;  // of the whole job
};

TrainingRuntime::TrainingRuntime(const topo::Topology& t, const std::vector<Job>& jobs, const std::vector<Node>& nodes,
                                 std::string file)
    : t_(t), context_(std::make_unique<work::TrainingContext>(t)) {
  for (const Node& n : nodes) first_gpu_.push_back(n.first_gpu);
  shape_of_.assign(jobs.size(), kNone);
  const long per_node = t.gpus_per_node();
  // Jobs with the same workload share one shape (and so every pricing of it).
  std::map<std::tuple<std::string, long, long, long, long, int, int>, std::size_t> known;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& j = jobs[i];
    if (!j.training) continue;
    const TrainingWork& w = *j.training;
    const auto key = std::make_tuple(w.model, w.tp, w.pp, w.micro_batch, w.global_batch, j.pods, j.pod.gpus);
    if (auto it = known.find(key); it != known.end()) {
      shape_of_[i] = it->second;
      continue;
    }
    const SourceLocation where{file, j.line, 0};
    auto s = std::make_unique<Shape>();
    try {
      s->model = work::library_model(w.model, "model");
    } catch (const InputError& e) {
      throw InputError(where, "model", e.problem(), e.valid());
    }
    s->pods = j.pods;
    s->pod_gpus = j.pod.gpus;
    const long gpus = static_cast<long>(j.pods) * j.pod.gpus;
    if (j.pod.gpus < 1 || w.tp < 1 || w.pp < 1 || gpus % (w.tp * w.pp) != 0)
      throw InputError(where, "gpus",
                       fmt::format("{} GPUs ({} pods x {}) do not split into TP {} x PP {} x a whole DP", gpus, j.pods,
                                   j.pod.gpus, w.tp, w.pp),
                       "pods x gpus a multiple of tp x pp");
    work::TrainOptions& o = s->options;
    o.layout.tp = w.tp;
    o.layout.pp = w.pp;
    o.layout.dp = gpus / (w.tp * w.pp);
    o.memory.micro_batch = w.micro_batch;
    o.global_batch = w.global_batch;
    // Compact: pods packed onto the first nodes, as many per node as fit, on its lowest GPUs.
    const long per_node_pods = j.pod.gpus <= per_node ? per_node / j.pod.gpus : 0;
    if (per_node_pods > 0 && (j.pods + per_node_pods - 1) / per_node_pods <= t.nodes()) {
      for (long p = 0; p < j.pods; ++p)
        for (long g = 0; g < j.pod.gpus; ++g)
          s->compact.push_back((p / per_node_pods) * per_node + (p % per_node_pods) * j.pod.gpus + g);
    }
    const std::size_t index = shapes_.size();
    shapes_.push_back(std::move(s));
    known.emplace(key, index);
    shape_of_[i] = index;
    // Priced now, so that an impossible layout is refused before the simulation starts.
    Shape& shape = *shapes_.back();
    if (shape.compact.empty()) continue;
    try {
      shape.ideal = &priced_on(index, shape.compact);
    } catch (const InputError& e) {
      throw InputError(where, column_of(e.field()), e.problem(), e.valid());
    }
  }
}

TrainingRuntime::~TrainingRuntime() = default;

void TrainingRuntime::fill_durations(const topo::Topology& t, std::vector<Job>& jobs, const std::string& file) {
  TrainingRuntime r(t, jobs, nodes_from_topology(t), file);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].training) jobs[i].duration = static_cast<double>(jobs[i].training->steps) * r.compact_step_s(i);
}

// Every training job: one without a compact placement never fits the cluster, so never starts.
bool TrainingRuntime::models(const Job& j) const { return j.training.has_value(); }

std::size_t TrainingRuntime::evaluations() const { return priced_.size(); }

double TrainingRuntime::compact_step_s(std::size_t job) {
  if (job >= shape_of_.size() || shape_of_[job] == kNone) return 0;
  const Shape& s = *shapes_[shape_of_[job]];
  return s.ideal != nullptr ? s.ideal->step_s : 0;
}

std::vector<long> TrainingRuntime::gpus_of(std::size_t job, const Placement& where) const {
  const Shape& s = *shapes_[shape_of_[job]];
  std::vector<long> gpus;
  for (const PodPlacement& p : where) {
    const long first = first_gpu_.at(static_cast<std::size_t>(p.node));
    if (first < 0) throw std::logic_error("training runtime: a node not built from the topology");
    for (int g : p.gpus) gpus.push_back(first + g);
  }
  if (static_cast<long>(gpus.size()) != s.options.layout.gpus())
    throw std::logic_error(
        fmt::format("training runtime: a placement of {} GPUs for a {}-GPU job", gpus.size(), s.options.layout.gpus()));
  return gpus;
}

const TrainingRuntime::Priced& TrainingRuntime::priced(std::size_t job, const Placement& where) {
  if (job >= shape_of_.size() || shape_of_[job] == kNone)
    throw std::logic_error("training runtime: speed asked of a job it does not model");
  return priced_on(shape_of_[job], gpus_of(job, where));
}

const TrainingRuntime::Priced& TrainingRuntime::priced_on(std::size_t shape, std::vector<long> gpus) {
  const Shape& s = *shapes_[shape];
  const long per_node = t_.gpus_per_node();
  const long tp = s.options.layout.tp;
  auto nodes_of = [&](auto first, auto last) {
    std::vector<long> n;
    for (auto i = first; i != last; ++i) n.push_back(*i / per_node);
    std::sort(n.begin(), n.end());
    n.erase(std::unique(n.begin(), n.end()), n.end());
    return n;
  };
  // train_step prices rank 0's groups for every rank. A placement may split some TP groups over
  // nodes and not others; the step runs at the pace of the slowest, so the TP group spread over
  // the most nodes is renumbered to ranks 0..TP-1 (a whole TP group swapped with another keeps
  // every group's membership, only the stage or data-parallel index it stands at changes).
  std::size_t worst = 0, most = 0;
  for (std::size_t b = 0; b * static_cast<std::size_t>(tp) < gpus.size(); ++b) {
    const auto first = gpus.begin() + static_cast<long>(b) * tp;
    const std::size_t n = nodes_of(first, first + tp).size();
    if (n > most) {
      most = n;
      worst = b;
    }
  }
  if (worst != 0) std::swap_ranges(gpus.begin(), gpus.begin() + tp, gpus.begin() + static_cast<long>(worst) * tp);

  auto key = std::make_pair(shape, gpus);
  if (auto it = priced_.find(key); it != priced_.end()) return *it->second;

  work::TrainOptions o = s.options;
  o.placement = gpus;
  const work::TrainResult r = work::train_step(*context_, s.model, o);
  if (!r.fits)
    throw InputError(
        {}, "model",
        fmt::format("{} with TP {} x PP {} x DP {} and micro batch {} needs {:.1f} GiB per GPU; the {} has "
                    "{:.1f} GiB (nvidia-smi)",
                    s.model.name, o.layout.tp, o.layout.pp, o.layout.dp, o.memory.micro_batch,
                    r.memory.total / (1 << 30), t_.gpu_spec().name, r.gpu_memory / (1 << 30)),
        "more GPUs, a larger tp or pp, or a smaller micro_batch");

  auto p = std::make_unique<Priced>();
  p->id = priced_.size();
  p->step_s = r.step_s;
  p->dp_comm_s = r.dp_communication_s;
  p->exposed_s = r.breakdown.dp_exposed_s;
  p->duty = r.step_s > 0 ? std::min(1.0, r.dp_communication_s / r.step_s) : 0;
  p->bucket_bytes = o.memory.bucket_bytes;
  p->op = comm::Op::all_reduce;  // DDP buckets (TrainingWork asks for no optimizer sharding)
  const topo::NetworkFabric* fabric = t_.fabric();
  const int nics = t_.node().nics();
  auto footprint = [&](const std::vector<long>& g) {
    Footprint f;
    f.nodes = nodes_of(g.begin(), g.end());
    if (f.nodes.size() > 1) {
      for (long n : f.nodes) {
        if (fabric == nullptr || nics == 0) {
          f.leaves.push_back(0);
          continue;
        }
        for (int nic = 0; nic < nics; ++nic) f.leaves.push_back(fabric->leaf_of(n, nic));
      }
      std::sort(f.leaves.begin(), f.leaves.end());
      f.leaves.erase(std::unique(f.leaves.begin(), f.leaves.end()), f.leaves.end());
    }
    return f;
  };
  for (auto& g : work::groups(o.layout, o.order, work::Axis::dp)) {
    if (g.size() < 2) continue;
    for (long& rank : g) rank = gpus[static_cast<std::size_t>(rank)];
    p->group_prints.push_back(footprint(g));
    p->groups.push_back(std::move(g));
  }
  p->job = footprint(gpus);
  if (!p->groups.empty()) {
    // As train_step: the representative group and this job's groups on the same nodes.
    p->rep = p->group_prints.front();
    p->mine.push_back(p->groups.front());
    for (std::size_t i = 1; i < p->groups.size(); ++i)
      if (intersects(p->group_prints[i].nodes, p->rep.nodes)) p->mine.push_back(p->groups[i]);
  }
  return *priced_.emplace(std::move(key), std::move(p)).first->second;
}

double TrainingRuntime::step_s(std::size_t job, const Placement& where) { return priced(job, where).step_s; }

double TrainingRuntime::step_s(std::size_t job, const Placement& where,
                               const std::vector<std::pair<std::size_t, const Placement*>>& neighbours) {
  const Priced& me = priced(job, where);
  if (me.mine.empty() || me.dp_comm_s <= 0) return me.step_s;
  // The neighbours whose gradient traffic can meet this job's: on one of its nodes (NICs, PCIe
  // switches), or, both spread over nodes, under one of its leaf switches (the leaf's up- and
  // downlinks). Jobs elsewhere share no link with it in a two-tier fabric and leave it alone.
  std::vector<const Priced*> near;
  for (const auto& [k, placement] : neighbours) {
    if (k == job || k >= shape_of_.size() || shape_of_[k] == kNone) continue;
    const Priced& n = priced(k, *placement);
    if (n.groups.empty() || n.dp_comm_s <= 0) continue;
    if (intersects(n.job.nodes, me.job.nodes) || intersects(n.job.leaves, me.job.leaves)) near.push_back(&n);
  }
  if (near.empty()) return me.step_s;
  std::sort(near.begin(), near.end(), [](const Priced* a, const Priced* b) { return a->id < b->id; });
  std::vector<const Priced*> key{&me};
  key.insert(key.end(), near.begin(), near.end());
  if (auto it = shared_.find(key); it != shared_.end()) return it->second;

  // Their data-parallel groups that reach the representative group's links, run beside this
  // job's own on the flow engine: every group's all-reduce of one bucket starting together.
  std::vector<std::vector<long>> together = me.mine;
  double duty = 0;  // the neighbours' groups' mean share of their step on the links
  for (const Priced* n : near) {
    for (std::size_t i = 0; i < n->groups.size(); ++i) {
      const Footprint& f = n->group_prints[i];
      if (intersects(f.nodes, me.rep.nodes) || intersects(f.leaves, me.rep.leaves)) {
        together.push_back(n->groups[i]);
        duty += n->duty;
      }
    }
  }
  const std::size_t theirs = together.size() - me.mine.size();
  if (theirs > 0) duty /= static_cast<double>(theirs);
  double step = me.step_s;
  if (theirs > 0) {
    const double alone = context_->contention(me.mine, me.op, me.bucket_bytes, "float");
    const double shared = context_->contention(together, me.op, me.bucket_bytes, "float");
    // The approximation: the neighbours are not in step with this job, so their reductions are
    // on the links only the share of their step they take (`duty`, the mean over their groups);
    // the expected stretch of this job's reductions is the flow engine's extra stretch, with all
    // of them at once, times that share (exact where the stretch grows linearly with the groups
    // on a bottleneck link). The stretch is applied to the reductions' whole time (their latency
    // too: a slight overestimate), and what the backward pass hid of them stays hidden until
    // they outgrow it. Their TP and pipeline traffic, when it crosses nodes, is left out.
    const double extra = std::max(0.0, shared / alone - 1) * duty;
    const double stream = me.dp_comm_s * alone;  // the reductions' time with this job's own groups
    const double hidden = std::max(0.0, stream - me.exposed_s);
    const double exposed = std::max(me.exposed_s, stream * (1 + extra) - hidden);
    step += exposed - me.exposed_s;
  }
  shared_.emplace(std::move(key), step);
  return step;
}

double TrainingRuntime::speed(std::size_t job, const Placement& where,
                              const std::vector<std::pair<std::size_t, const Placement*>>& neighbours) {
  const double ideal = compact_step_s(job);
  const double step = step_s(job, where, neighbours);
  return ideal > 0 && step > 0 ? ideal / step : 1.0;
}

}  // namespace gf::sched
