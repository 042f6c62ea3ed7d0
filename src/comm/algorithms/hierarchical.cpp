// Hierarchical all_reduce, gpufabric's own (NCCL has no such algorithm, so it runs only when
// forced): phase 0 reduce-scatters inside each node (a ring over the node's ranks), phase 1
// all-reduces each 1/p shard across nodes (a ring per local index, i.e. per rail), phase 2
// all-gathers inside each node. Other operations run as rings.
#include "comm/algorithms/algorithms.hpp"
#include "comm/algorithms/model_terms.hpp"
#include "comm/algorithms/patterns.hpp"

namespace gf::comm {

namespace {

class Hierarchical final : public CollectiveAlgorithm {
public:
  constexpr Hierarchical()
      : CollectiveAlgorithm(
            {.id = Algo::hierarchical, .name = "Hierarchical", .in_nccl = false, .tuned_by_default = false}) {}

  [[nodiscard]] bool available(const Communicator& c, Op op, bool /*nvls_type*/) const override {
    return op == Op::all_reduce && c.nodes() > 1 && c.ranks_per_node() > 1;
  }

  [[nodiscard]] double latency_us(const Communicator& c, Op /*op*/, Proto p) const override {
    // Two rings inside the node (reduce-scatter, all-gather) and one across nodes, at the
    // ring's figures.
    const LatencyTerms t = latency_terms(c, p, Algo::ring, Algo::ring);
    double us = t.base;
    us += 2.0 * static_cast<double>(c.ranks_per_node() - 1) * t.intra +
          2.0 * static_cast<double>(c.nodes() - 1) * t.inter;
    return us;
  }

  [[nodiscard]] int phases(Op op) const override { return op == Op::all_reduce ? 3 : 1; }
  void emit(const Communicator& c, Op op, double size, const PatternScope& scope, Emitter& e) const override {
    if (op != Op::all_reduce) {
      emit_ring(c, op, size, scope.root, e);
      return;
    }
    const int p = c.ranks_per_node();
    const long nodes = c.nodes();
    if (scope.phase == 1) {
      const double per_edge = 2.0 * static_cast<double>(nodes - 1) / static_cast<double>(nodes) * size / p;
      for (int j = 0; j < p; ++j) {
        for (long k = 0; k < nodes; ++k) e.edge(k * p + j, ((k + 1) % nodes) * p + j, per_edge);
      }
      return;
    }
    const double per_edge = static_cast<double>(p - 1) / p * size;
    for (long k = 0; k < nodes; ++k) {
      for (int j = 0; j < p; ++j) e.edge(k * p + j, k * p + (j + 1) % p, per_edge);
    }
  }
};

constinit const Hierarchical instance{};

}  // namespace

constinit const CollectiveAlgorithm* const algorithms::hierarchical = &instance;

}  // namespace gf::comm
