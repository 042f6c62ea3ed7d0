#pragma once
// A collective over a list of sizes, as nccl-tests runs it: the typed request behind
// `gpufabric collective` and `gpufabric.collective()`, checked here (the same errors whichever
// front end asks), and its result: per-size predictions with their error bands, and the
// communicator they ran on.
#include <optional>
#include <string>
#include <vector>

#include "band/band_class.hpp"
#include "band/error_band.hpp"
#include "comm/communicator_summary.hpp"
#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "comm/nccl_params.hpp"
#include "topo/topology.hpp"

namespace gf::comm {

struct CollectiveSweepRequest {
  std::string op = "all_reduce";  // all_reduce | all_gather | ... | sendrecv (parse_op)
  std::string dtype = "float";    // nccl-tests -d
  std::string redop = "sum";      // nccl-tests -o
  // Bytes per rank buffer, nccl-tests' "size"; each is rounded down to whole elements per rank.
  std::vector<double> sizes;
  long ranks = 0;               // 0: every GPU
  long root = 0;                // broadcast and reduce
  int gpus_per_process = 1;     // nccl-tests -g
  bool cuda_graph = false;      // nccl-tests -G N with N > 0
  std::string engine = "auto";  // flow | analytic | auto
  // NCCL_ALGO / NCCL_PROTO syntax: one name forces it, a list ("Ring,Tree") or "^" and a list
  // leaves NCCL's tuner to choose among those; empty: the environment's, else NCCL's own choice.
  std::string algo;
  std::string proto;
  std::vector<std::string> env;  // NAME=VALUE, the run's NCCL environment
};

// The request's fields as messages name them; the CLI maps them to its flags.
namespace sweep_field {
inline constexpr const char* op = "op";
inline constexpr const char* dtype = "dtype";
inline constexpr const char* redop = "redop";
inline constexpr const char* sizes = "sizes";
inline constexpr const char* ranks = "ranks";
inline constexpr const char* root = "root";
inline constexpr const char* gpus_per_process = "gpus_per_process";
inline constexpr const char* engine = "engine";
inline constexpr const char* algo = "algo";
inline constexpr const char* proto = "proto";
inline constexpr const char* env = "env";
}  // namespace sweep_field

struct CollectiveSweepRow {
  double size_bytes = 0;
  long count = 0;
  std::string type;
  std::string redop;
  int root = -1;
  CollectiveResult result;
  band::Band band;  // of the time: how measured times of held-out rows like this one fell from the model's
};

struct CollectiveSweep {
  std::string op;
  std::string cluster;
  std::string engine;  // of the first size
  CommunicatorSummary comm;
  // The environment applied, the variables it does not model, the topology's and the
  // communicator's notes; a warning starts with "warning: ".
  std::vector<std::string> notes;
  std::vector<CollectiveSweepRow> rows;
};

// Checks the request (InputError naming its sweep_field) and predicts every size.
CollectiveSweep sweep_collective(const topo::Topology& topology, const NcclParams& params,
                                 const CollectiveSweepRequest& request);

// The sizes nccl-tests steps through: from `min` to `max`, times `factor` each step, or plus
// `step` bytes when `step` > 0. At most 4096 of them (InputError on "sizes").
std::vector<double> size_steps(double min, double max, long factor, double step);

// Where a collective's data runs, for its error band's class (band/band_class.hpp).
band::CollectivePath band_path(const topo::Topology& t, long nodes);

}  // namespace gf::comm
