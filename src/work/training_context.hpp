#pragma once
// What a training-step evaluation reuses from the one before on the same cluster: the
// communicators of the groups it met (each with its routes and its per-byte data times), the
// collectives it priced (by group, operation, size and type), and how much the concurrent
// data-parallel groups slow one another down. The planner evaluates thousands of layouts of one
// model on one cluster: with one context they share all of it.
//
// Not thread-safe: one context per thread (they may share the topology).
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "comm/model.hpp"
#include "topo/topology.hpp"
#include "work/parallel_layout.hpp"

namespace gf::work {

// Another job's traffic on the same cluster: its GPUs run `op` of `bytes` back to back.
struct BackgroundJob {
  std::vector<long> gpus;
  comm::Op op = comm::Op::all_reduce;
  double bytes = 0;
};

class TrainingContext {
public:
  explicit TrainingContext(const topo::Topology& t) : t_(t) {}

  [[nodiscard]] const topo::Topology& topology() const { return t_; }

  // The communicator of exactly these GPUs (global indices), built once.
  const comm::Communicator& communicator(const std::vector<long>& gpus);

  // The collective on its own (NCCL's choice, the closed form), priced once per
  // (group, op, size, dtype).
  // `cuda_graph`: launched from a CUDA graph (serving engines' decode), no per-call launch cost.
  const comm::CollectiveResult& collective(const std::vector<long>& gpus, comm::Op op, double bytes,
                                           const std::string& dtype, bool cuda_graph = false);
  // The same for a communicator this context built (no look-up of its GPUs).
  const comm::CollectiveResult& collective(const comm::Communicator& c, comm::Op op, double bytes,
                                           const std::string& dtype, bool cuda_graph = false);

  // How much longer the data part of `op` on `groups[0]` takes while every group in `groups`
  // runs the same collective at the same moment (they share NICs, PCIe switches and the
  // fabric): the flow engine's time with all of them over its time with the first alone, for
  // `bytes` per group. 1 when the groups share no link. Computed once per set of groups.
  // With `background`, its collective runs throughout, beside the groups, and stretches them
  // where they share links with it.
  double contention(const std::vector<std::vector<long>>& groups, comm::Op op, double bytes, const std::string& dtype,
                    const BackgroundJob* background = nullptr);
  // Whether `contention` may price many alike nodes on a sample of them (contention_sample.hpp;
  // on by default). Off: every group's every rank, for tests that compare the two.
  void sample_contention(bool on) { sample_contention_ = on; }
  // The same with the flows of `op` under `algo` and `proto` exactly as given, every call (no
  // cache, no sharing between operations that put the same flows on the links).
  double simulated_contention(const std::vector<std::vector<long>>& groups, comm::Op op, comm::Algo algo,
                              comm::Proto proto, double bytes, const std::string& dtype,
                              const BackgroundJob* background = nullptr);

  // The gradient-reduction groups of a layout (every data-parallel group joined with its
  // context-parallel peers) and those of them that share a node with the first one (their
  // traffic meets its traffic on NICs and PCIe switches): built by `make` once per layout shape
  // (TP, PP, DP, CP, EP, rank order and the ranks' GPUs, `placement`, empty when rank r is on
  // GPU r) and reused, since a planner times hundreds of layouts of one shape (micro-batches,
  // recomputation, sharding) and the groups are O(GPUs) to build.
  struct LayoutGroups {
    std::vector<std::vector<long>> gradient;
    std::vector<std::vector<long>> concurrent;
  };
  template <typename Make>
  const LayoutGroups& layout_groups(const ParallelLayout& l, const RankOrder& order, const std::vector<long>& placement,
                                    Make make) {
    auto key = shape_key(l, order, placement);
    auto it = groups_.find(key);
    if (it == groups_.end()) it = groups_.emplace(std::move(key), make()).first;
    return it->second;
  }

  // The pairs of GPUs facing each other across the pipeline's stage boundaries, built by
  // `make` once per layout shape like `layout_groups`.
  struct PipelinePairs {
    // The slowest boundary's (stage b GPU, stage b + 1 GPU) pairs that share a node with its
    // first pair, GPU 0's pipeline's: they send at the same moment.
    std::vector<std::vector<long>> slowest;
  };
  template <typename Make>
  const PipelinePairs& pipeline_pairs(const ParallelLayout& l, const RankOrder& order,
                                      const std::vector<long>& placement, Make make) {
    auto key = shape_key(l, order, placement);
    auto it = pipeline_pairs_.find(key);
    if (it == pipeline_pairs_.end()) it = pipeline_pairs_.emplace(std::move(key), make()).first;
    return it->second;
  }

  // Counters, for tests and benchmarks.
  [[nodiscard]] std::size_t communicators_built() const { return comms_.size(); }
  [[nodiscard]] std::size_t flow_runs() const { return flow_runs_; }
  [[nodiscard]] std::size_t collectives_priced() const { return collectives_.size(); }

private:
  static std::vector<long> shape_key(const ParallelLayout& l, const RankOrder& order,
                                     const std::vector<long>& placement) {
    std::vector<long> key{l.tp, l.pp, l.dp, l.cp, l.ep};
    for (const Axis a : order.inner_to_outer) key.push_back(static_cast<long>(a));
    if (!placement.empty()) key.push_back(-1);  // no axis is -1: keeps the two parts apart
    key.insert(key.end(), placement.begin(), placement.end());
    return key;
  }
  const topo::Topology& t_;
  std::map<std::vector<long>, std::unique_ptr<comm::Communicator>> comms_;
  // Hashed: the planner's loop looks collectives up far more often than it prices new ones.
  struct CollectiveKey {
    const comm::Communicator* communicator;
    int op;
    double bytes;
    std::string dtype;
    bool cuda_graph;
    bool operator==(const CollectiveKey&) const = default;
  };
  struct CollectiveKeyHash {
    std::size_t operator()(const CollectiveKey& k) const noexcept;
  };
  std::unordered_map<CollectiveKey, comm::CollectiveResult, CollectiveKeyHash> collectives_;
  std::map<std::tuple<std::vector<long>, int, int, int, double, std::string, int, double>, double> contention_;
  std::map<std::vector<long>, LayoutGroups> groups_;
  std::map<std::vector<long>, PipelinePairs> pipeline_pairs_;
  std::size_t flow_runs_ = 0;
  bool sample_contention_ = true;
};

}  // namespace gf::work
