#pragma once
// Validation of collective predictions against public nccl-tests results
// (data/validation/collectives.yaml).
#include <optional>
#include <string>
#include <vector>

#include "band/band_class.hpp"
#include "comm/nccl_config.hpp"
#include "hw/catalog.hpp"
#include "validate/machine.hpp"

namespace gf::validate {

struct CollectiveRow {
  std::string id;
  std::string preset;
  std::string cluster;
  long nodes = 1;
  long gpus = 0;
  std::string network;
  std::string nic;
  std::optional<int> nics_per_node;
  std::vector<int> local_gpus;
  SourceLocation local_gpus_where;  // the GPUs of each node the run used (CUDA_VISIBLE_DEVICES); empty: the first ones
  std::optional<bool> p2p;
  std::optional<bool> gpudirect;
  std::string op;
  double size_bytes = 0;
  std::string dtype;
  std::optional<double> busbw_GBps;
  std::optional<double> time_us;
  std::string algo;
  std::string proto;
  bool cuda_graph = false;
  int gpus_per_process = 1;                   // nccl-tests -g
  comm::NcclConfig nccl_env;                  // the NCCL_* variables the run set
  std::vector<std::string> nccl_env_ignored;  // variables set that the model does not read
  std::string transport;                      // what the source's NCCL log shows, when known
  std::string network_actual;                 // the real network, where `network` is a stand-in
  std::string stand_in;                       // what the preset or cluster file differs in from the measured machine
  bool off_path = false;  // from a file of `set: off-path` (clouds, HPC centres, workstations beyond the core set)
  std::string machine;
  bool calibration = false;
  std::string excluded;  // why the row is left out of the error groups (its source calls the run faulty)
  // Why the model misses this row by more than kKnownMissBound, as far as it is known. Such a
  // row counts in the groups like any other; the text says what the model lacks or what the
  // run did differently. A test holds the two together: every row beyond the bound has one,
  // and no row within it keeps one.
  std::string known_miss;
  std::string source;
  std::string note;
  RowOrigin origin;  // file, line and keys, for errors found when predicting
};

// The error beyond which a row must say why (issue 10: "every row within 50% or explained").
inline constexpr double kKnownMissBound = 0.5;

struct CollectiveCheck {
  CollectiveRow row;
  std::string band;     // "<=64KiB", "64KiB-64MiB", ">=64MiB"
  std::string metric;   // "busbw" or "time"
  double measured = 0;  // GB/s or us
  double predicted = 0;
  double error = 0;     // (predicted - measured) / measured
  std::string network;  // what the row ran over (the preset's or the row's override)
  int nics_per_node = 0;
  band::CollectivePath path;  // where its data ran (its error band class)
  std::string algorithm;      // what the model chose
  std::string protocol;
};

std::vector<CollectiveRow> parse_collective_rows(const std::string& text, const std::string& file);
std::vector<CollectiveRow> builtin_collective_rows();
std::vector<CollectiveCheck> check_collectives(const std::vector<CollectiveRow>& rows, const hw::Catalog& catalog);

}  // namespace gf::validate
