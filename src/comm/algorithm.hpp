#pragma once
// One object per collective algorithm, and the registry that finds it by its Algo id.
//
// Why: what gpufabric knows about an algorithm (when NCCL runs it, with which protocols, what
// its latency is, which flows it sends, over how many channels and in which chunk pipeline,
// and how NCCL's own tuner rates it) used to be spread over switch statements in the model,
// the pattern emitter, the pipeline fill and the tuner. Each algorithm now lives in one file
// under algorithms/, and the generic code (predict, the tuner loop, pattern emission, the
// CLI's names) asks the registry.
//
// Adding an algorithm:
//   1. a value in `enum class Algo` (comm/collective.hpp), before `p2p`, which stays last;
//   2. algorithms/<name>.cpp: a class derived from CollectiveAlgorithm, its one constinit
//      instance and the pointer to it, declared beside the others in algorithms/algorithms.hpp;
//   3. one line in the registry table (algorithm.cpp), and the file in CMakeLists.txt.
// NCCL's own algorithms also have rows in data/comm/nccl.yaml's latency tables, read by the
// keys in nccl_params.cpp.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/collective.hpp"

namespace gf::comm {

class Communicator;
class Emitter;
struct PatternScope;
struct PipelineShape;

// What one (algorithm, protocol) does to the Simple pattern's time: every flow's bytes times
// `inflate`, and at least `floor` seconds (see WireShape in model.hpp).
struct WireTerms {
  double inflate = 1.0;
  double floor = 0;
};

// The protocols an algorithm has kernels for, as a set of bits by Proto.
using ProtoSet = unsigned;
constexpr ProtoSet proto_bit(Proto p) { return 1u << static_cast<unsigned>(p); }
inline constexpr ProtoSet kEveryProto = proto_bit(Proto::ll) | proto_bit(Proto::ll128) | proto_bit(Proto::simple);

// The facts about an algorithm that are plain data (read on every prediction, so not virtual).
struct AlgorithmTraits {
  Algo id = Algo::ring;
  const char* name = "";             // NCCL's spelling (NCCL_ALGO, NCCL_DEBUG=INFO): Ring, NVLSTree, ...
  const char* alias = nullptr;       // another spelling NCCL_ALGO accepts for it
  bool forceable = true;             // --algo / NCCL_ALGO may name it (point-to-point follows the operation)
  bool in_nccl = true;               // NCCL has it (gpufabric's own algorithms run only when forced)
  bool tuned_by_default = true;      // NCCL's tuner considers it when nothing is forced
  bool collnet = false;              // SHARP: where not tuned by default, tuned with NCCL_COLLNET_ENABLE=1
  ProtoSet protocols = kEveryProto;  // NCCL has a kernel for it with these protocols
  // It reduces through NVLink SHARP: a type SHARP cannot reduce makes a forced run fall back to Ring.
  bool needs_nvls_type = false;
  bool follows_channel_env = true;     // NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS bound its channels
  bool fill_bounded_by_depth = false;  // chunks in flight bounded by the transfers up and down its depth
  // Every node carries the same traffic (rings, NVLS, CollNet); false for trees, whose nodes
  // differ, so that the closed form sums a leaf's nodes instead of scaling one.
  bool nodes_alike = true;
};

class CollectiveAlgorithm {
public:
  CollectiveAlgorithm(const CollectiveAlgorithm&) = delete;
  CollectiveAlgorithm& operator=(const CollectiveAlgorithm&) = delete;

  [[nodiscard]] const AlgorithmTraits& traits() const { return traits_; }
  [[nodiscard]] Algo id() const { return traits_.id; }
  [[nodiscard]] const char* name() const { return traits_.name; }
  [[nodiscard]] bool has_protocol(Proto p) const { return (traits_.protocols & proto_bit(p)) != 0; }

  // Selection. Whether it can run `op` on `c`; `nvls_type`: NVLink SHARP reduces the request's
  // data type with its operation.
  [[nodiscard]] virtual bool available(const Communicator& c, Op op, bool nvls_type) const = 0;
  // The protocol NCCL runs when NCCL_PROTO forces `p` and the pair is not available.
  [[nodiscard]] virtual Proto forced_protocol(const Communicator& /*c*/, Proto p) const { return p; }
  // Throws InputError when it is forced on hardware that cannot run it at all.
  virtual void check_hardware(const Communicator& /*c*/) const {}
  // What NCCL runs instead when it is forced where it is not available.
  [[nodiscard]] virtual Algo fallback(const Communicator& /*c*/, Op /*op*/) const { return Algo::ring; }
  // The protocol NCCL picks without its tuner, where it has no tuner for this algorithm.
  [[nodiscard]] virtual std::optional<Proto> untuned_protocol(const Communicator& /*c*/, Op /*op*/,
                                                              double /*size*/) const {
    return std::nullopt;
  }

  // gpufabric's time model. The protocol's bus-bandwidth factor relative to Simple (NCCL's
  // measured figures).
  [[nodiscard]] virtual double protocol_factor(const Communicator& c, Op op, Proto p) const;
  // The latency part of one call, microseconds, without the launch cost.
  [[nodiscard]] virtual double latency_us(const Communicator& c, Op op, Proto p) const = 0;
  // What its schedule adds to the latency at this size, microseconds (point-to-point groups:
  // the waves of peers and the proxy's posts; 0 for the others).
  [[nodiscard]] virtual double schedule_latency_us(const Communicator& /*c*/, Op /*op*/, Proto /*p*/,
                                                   double /*size*/) const {
    return 0;
  }
  // Its own changes to the protocol's wire overhead and floor.
  virtual void adjust_wire(const Communicator& /*c*/, Op /*op*/, Proto /*p*/, double /*size*/, WireTerms& /*w*/) const {
  }

  // Traffic. Phases run one after another; each phase's flows run concurrently.
  [[nodiscard]] virtual int phases(Op /*op*/) const { return 1; }
  // The node the closed form looks at: one that carries as much as any.
  [[nodiscard]] virtual long representative_node(const Communicator& /*c*/) const { return 0; }
  // Emits the flows of `op` for a buffer of `size` bytes (scope.phase for several phases).
  virtual void emit(const Communicator& c, Op op, double size, const PatternScope& scope, Emitter& e) const = 0;

  // Channels NCCL's search and init give it without environment overrides.
  [[nodiscard]] virtual int default_channels(const Communicator& c) const;
  // Its channels, with the environment's bounds where they apply.
  [[nodiscard]] int channels(const Communicator& c) const;
  // The channels shown for one call (point-to-point varies them with the size).
  [[nodiscard]] virtual int reported_channels(const Communicator& c, Op /*op*/, double /*size*/) const {
    return channels(c);
  }

  // Chunk pipeline of `op` with protocol `p` (pipelines = 0: no fill).
  [[nodiscard]] virtual PipelineShape pipeline_shape(const Communicator& c, Op op, Proto p, double size) const;

  // NCCL's tuner (tuning.cc). Bus-to-algorithm bandwidth ratio.
  [[nodiscard]] virtual double nccl_algbw_ratio(Op op, long ranks) const;
  // NCCL's bus bandwidth for protocol `p`, GB/s, from its graph's steady Simple bus bandwidth
  // and, for NVLS, a GPU's NVLink rate; 0 where NCCL disables the pair.
  [[nodiscard]] virtual double nccl_busbw(const Communicator& /*c*/, Op /*op*/, Proto /*p*/, double graph_busbw_GBps,
                                          double /*nvlink_GBps*/) const {
    return graph_busbw_GBps;
  }
  // NCCL's latency, microseconds, for `size` bytes.
  [[nodiscard]] virtual double nccl_latency_us(const Communicator& c, Op op, Proto p, double size) const;
  // NCCL's correction of its algorithm bandwidth at this size (1: none).
  [[nodiscard]] virtual double nccl_bw_correction(const Communicator& /*c*/, Op /*op*/, Proto /*p*/,
                                                  double /*size*/) const {
    return 1.0;
  }
  // The algorithm whose search gives NCCL's graph bandwidth for this one.
  [[nodiscard]] virtual Algo nccl_graph(const Communicator& /*c*/, Op /*op*/) const { return id(); }

protected:
  // Each algorithm is one constant-initialized instance in its file, never deleted through
  // this base: a trivial destructor keeps it constant-initializable.
  constexpr explicit CollectiveAlgorithm(const AlgorithmTraits& traits) : traits_(traits) {}
  ~CollectiveAlgorithm() = default;

private:
  AlgorithmTraits traits_;
};

namespace detail {
// The registry's table (algorithm.cpp), indexed by Algo.
extern const CollectiveAlgorithm* const* const registry[kAlgoCount];
}  // namespace detail

// The registry: the object for an id (inline: the model asks for it many times per
// prediction), and all of them in Algo's order.
inline const CollectiveAlgorithm& algorithm(Algo a) { return **detail::registry[static_cast<std::size_t>(a)]; }
std::span<const CollectiveAlgorithm* const> all_algorithms();

// The names --algo and NCCL_ALGO accept, in Algo's order; and as one line for messages, with
// `last_separator` before the last one and, if `mark_own`, gpufabric's own algorithms marked.
std::vector<std::string> algo_names();
std::string algo_name_list(const char* last_separator = ", ", bool mark_own = false);

}  // namespace gf::comm
