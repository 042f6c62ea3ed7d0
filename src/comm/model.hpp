#pragma once
// Predicted time of one collective: NCCL's latency model plus the data time of the
// algorithm's traffic on the topology, from the flow engine or the closed form; and the choice
// of algorithm and protocol by predicted time, as NCCL's tuner makes it.
#include <optional>
#include <string>
#include <vector>

#include "comm/collective.hpp"
#include "comm/communicator.hpp"
#include "core/enum_names.hpp"
#include "core/units.hpp"

namespace gf::comm {

enum class Engine { automatic, flow, analytic };
inline constexpr EnumNames<Engine, 3> kEngineNames{
    {{Engine::automatic, "auto"}, {Engine::flow, "flow"}, {Engine::analytic, "analytic"}}};
const char* to_string(Engine e);

// Ranks above which the automatic choice uses the closed form.
inline constexpr long kFlowEngineMaxRanks = 256;

struct CollectiveRequest {
  Op op = Op::all_reduce;
  double size = 0;  // bytes, nccl-tests' "size"
  std::optional<Algo> algo;
  std::optional<Proto> proto;
  // The candidates NCCL's tuner may choose among, as NCCL_ALGO / NCCL_PROTO lists give them
  // (parse_algo_list); empty: the communicator's NCCL_ALGO / NCCL_PROTO, else all.
  std::vector<Algo> algos;
  std::vector<Proto> protos;
  Engine engine = Engine::automatic;
  bool cuda_graph = false;      // launched from a CUDA graph (nccl-tests -G): no per-call launch cost
  long root = 0;                // broadcast and reduce
  int gpus_per_process = 1;     // GPUs one thread drives (nccl-tests -g): their launches serialise
  std::string dtype = "float";  // nccl-tests -d spelling
  std::string redop = "sum";    // nccl-tests -o spelling
  // sendrecv placed in a task graph (add_collective): only this rank sends (to the next), as a
  // pipeline stage does; -1, every rank. Its time alone stays the sendrecv's (the same on
  // full-duplex links): only the flows beside other traffic change.
  long sender = -1;
};

// Whether NVLink SHARP reduces this type with this operation (NCCL's ncclNvlsSupported).
bool nvls_supports(const std::string& dtype, const std::string& redop);

// A candidate gpufabric's model finds clearly faster than NCCL's choice.
struct BetterChoice {
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  Seconds time;       // in gpufabric's model (closed form)
  double saving = 0;  // fraction of the chosen one's time it saves
};

struct CollectiveResult {
  Seconds time;
  Seconds latency;    // NCCL latency model part
  Seconds data_time;  // bytes moving through the topology
  Seconds fill;       // chunk pipelines filling before they reach the steady rate
  Algo algo = Algo::ring;
  Proto proto = Proto::simple;
  Engine engine = Engine::analytic;
  int channels = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::vector<std::string> warnings;
  std::optional<BetterChoice> better;  // set where NCCL's tuner chose clearly worse than it could
};

// The (algorithm, protocol) pairs NCCL would consider for `op` on this communicator.
std::vector<std::pair<Algo, Proto>> candidates(const Communicator& c, Op op, bool nvls_type = true);

// Throws InputError when a forced algorithm cannot run on this hardware at all (NVLS without
// NVSwitch SHARP, CollNet without SHARP switches); adds a warning when NCCL would fall back.
CollectiveResult predict(const Communicator& c, const CollectiveRequest& req);

// How one (algorithm, protocol) turns the Simple pattern's traffic into its data time:
// every flow's bytes times `inflate` (the protocol's wire overhead, and NCCL's tree shortfall
// at medium sizes), and at least `floor` whatever the links do (NCCL's LL bandwidth cap, the
// channel copy rate of a point-to-point transfer). Linear in the flows, so it holds for flows
// that share links with others.
struct WireShape {
  double inflate = 1.0;
  Seconds floor;
};
WireShape wire_shape(const Communicator& c, const CollectiveRequest& req, Algo algo, Proto proto);

// The two engines, for one fixed algorithm and protocol (exposed for tests and benchmarks).
Seconds data_time(const Communicator& c, Op op, Algo algo, Proto proto, double size, Engine engine);
// The time the latency part of a collective takes: NCCL's base and per-hop figures on this
// communicator's links, the NVLS fixed time, and the launch cost outside CUDA graphs. (What
// NCCL's tuner chooses with is nccl_tuner's.)
Seconds latency(const Communicator& c, Op op, Algo algo, Proto proto, bool cuda_graph = false,
                int gpus_per_process = 1);

}  // namespace gf::comm
