#include "work/training_context.hpp"

#include <algorithm>

#include "comm/pattern_tasks.hpp"
#include "sim/engine.hpp"
#include "work/contention_sample.hpp"

namespace gf::work {

std::size_t TrainingContext::CollectiveKeyHash::operator()(const CollectiveKey& k) const noexcept {
  // Boost's hash_combine mixing: the fields are few and their hashes cheap.
  std::size_t h = std::hash<const void*>{}(k.communicator);
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<int>{}(k.op));
  mix(std::hash<double>{}(k.bytes));
  mix(std::hash<std::string>{}(k.dtype));
  mix(k.cuda_graph ? 1 : 0);
  return h;
}

const comm::Communicator& TrainingContext::communicator(const std::vector<long>& gpus) {
  auto it = comms_.find(gpus);
  if (it == comms_.end()) it = comms_.emplace(gpus, std::make_unique<comm::Communicator>(t_, gpus)).first;
  return *it->second;
}

const comm::CollectiveResult& TrainingContext::collective(const std::vector<long>& gpus, comm::Op op, double bytes,
                                                          const std::string& dtype, bool cuda_graph) {
  return collective(communicator(gpus), op, bytes, dtype, cuda_graph);
}

const comm::CollectiveResult& TrainingContext::collective(const comm::Communicator& c, comm::Op op, double bytes,
                                                          const std::string& dtype, bool cuda_graph) {
  CollectiveKey key{&c, static_cast<int>(op), bytes, dtype, cuda_graph};
  auto it = collectives_.find(key);
  if (it == collectives_.end()) {
    comm::CollectiveRequest r;
    r.op = op;
    r.size = bytes;
    r.dtype = dtype;
    r.engine = comm::Engine::analytic;
    r.cuda_graph = cuda_graph;
    it = collectives_.emplace(std::move(key), comm::predict(c, r)).first;
  }
  return it->second;
}

namespace {

// A ring all-reduce is a reduce-scatter pass then an all-gather pass around the same ring, so
// the three put the same flows on the same links, step after step: the groups stretch each
// other by the same factor in all three (test: Contention.RingOpsShareOneFactor). They share
// one entry, computed with the all-gather's flows.
comm::Op pattern_op(comm::Op op, comm::Algo algo) {
  const bool ring_pass = algo == comm::Algo::ring && (op == comm::Op::all_reduce || op == comm::Op::reduce_scatter);
  return ring_pass ? comm::Op::all_gather : op;
}

}  // namespace

double TrainingContext::contention(const std::vector<std::vector<long>>& groups, comm::Op op, double bytes,
                                   const std::string& dtype, const BackgroundJob* background) {
  const bool other_job = background != nullptr && background->gpus.size() >= 2 && background->bytes > 0;
  if ((groups.size() < 2 && !other_job) || groups.empty() || bytes <= 0) return 1.0;
  // NCCL's choice for the first group (the groups are alike, and its tuner does not see the
  // others).
  const comm::CollectiveResult& chosen = collective(groups.front(), op, bytes, dtype);
  const comm::Op flows_op = pattern_op(op, chosen.algo);
  // Many nodes alike: a sample of them (another job's GPUs are not alike).
  const auto* fabric = t_.fabric();
  // On an oversubscribed fabric a ring still crosses each leaf's uplinks a fixed number of times
  // per channel whatever the nodes it spans, so its sample stands for the whole; a tree's
  // crossings grow with its nodes, so trees there run every rank (test:
  // Contention.SampledNodesGiveTheFullFactor, oversubscribed cases).
  const bool nonblocking = fabric == nullptr || fabric->shape().oversubscription <= 1.0 + 1e-9;
  const bool stands_for_all = nonblocking || chosen.algo == comm::Algo::ring;
  const auto sampled =
      other_job || !sample_contention_ ? std::nullopt : sample_groups(groups, t_.gpus_per_node(), stands_for_all);
  const auto& priced = sampled ? *sampled : groups;
  std::vector<long> flat;
  for (const auto& g : priced) {
    flat.insert(flat.end(), g.begin(), g.end());
    flat.push_back(-1);  // separates the groups in the key
  }
  if (other_job) flat.insert(flat.end(), background->gpus.begin(), background->gpus.end());
  const auto key = std::make_tuple(
      std::move(flat), static_cast<int>(flows_op), static_cast<int>(chosen.algo), static_cast<int>(chosen.proto), bytes,
      dtype, other_job ? static_cast<int>(background->op) : -1, other_job ? background->bytes : 0.0);
  if (auto it = contention_.find(key); it != contention_.end()) return it->second;
  const double factor =
      simulated_contention(priced, flows_op, chosen.algo, chosen.proto, bytes, dtype, other_job ? background : nullptr);
  contention_.emplace(key, factor);
  return factor;
}

double TrainingContext::simulated_contention(const std::vector<std::vector<long>>& groups, comm::Op op, comm::Algo algo,
                                             comm::Proto proto, double bytes, const std::string& dtype,
                                             const BackgroundJob* background) {
  // The flows of the first group alone and of every group at once. The data part is the flows'
  // time, or the per-connection floor where that is longer (nobody shares it).
  comm::CollectiveRequest req;
  req.op = op;
  req.size = bytes;
  req.dtype = dtype;
  auto run = [&](std::size_t count, bool with_background) {
    sim::TaskGraph g;
    double floor = 0;
    std::vector<sim::TaskId> ends;  // the groups' last flows (not the other job's)
    for (std::size_t i = 0; i < count; ++i) {
      const comm::Communicator& c = communicator(groups[i]);
      if (c.ranks() < 2) continue;
      const comm::WireShape shape = comm::wire_shape(c, req, algo, proto);
      const auto traffic = comm::add_pattern_flows(g, c, op, algo, bytes, shape.inflate, 0, std::nullopt);
      ends.insert(ends.end(), traffic.last.begin(), traffic.last.end());
      floor = std::max({floor, traffic.connection_seconds, shape.floor.value()});
    }
    if (with_background) {
      // The other job's collective, back to back for as long as ours runs: a thousand times
      // its size keeps its flows on the links throughout, at the rates max-min gives them.
      const comm::Communicator& b = communicator(background->gpus);
      const comm::CollectiveResult& bg = collective(b, background->op, background->bytes, dtype);
      comm::CollectiveRequest breq;
      breq.op = background->op;
      breq.size = background->bytes;
      breq.dtype = dtype;
      const comm::WireShape shape = comm::wire_shape(b, breq, bg.algo, bg.proto);
      comm::add_pattern_flows(g, b, background->op, bg.algo, 1000 * background->bytes, shape.inflate, 0, std::nullopt);
    }
    ++flow_runs_;
    if (g.size() == 0) return floor;
    const auto r = sim::simulate(g, communicator(groups.front()).capacity());
    double flows = 0;
    for (const auto t : ends) flows = std::max(flows, r.finish[t]);
    return std::max(floor, flows);
  };
  const double alone = run(1, false);
  const double together = run(groups.size(), background != nullptr);
  return alone > 0 ? std::max(1.0, together / alone) : 1.0;
}

}  // namespace gf::work
