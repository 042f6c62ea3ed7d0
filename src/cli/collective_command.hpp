#pragma once
// `gpufabric collective OP`: nccl-tests' flags, predicted instead of measured.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/cluster_options.hpp"
#include "comm/collective.hpp"
#include "comm/collective_sweep.hpp"

namespace gf::cli {

struct CollectiveOptions {
  std::string op;
  ClusterOptions cluster;
  std::string gpus;  // empty: every GPU
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  std::string factor;
  std::string step;
  std::string dtype = "float";
  std::string redop = "sum";
  std::string root = "0";
  std::string algo;
  std::string proto;
  std::string engine = "auto";
  std::string graph_iters = "0";
  std::string gpus_per_thread = "1";
  std::string format = "table";
  std::vector<std::string> env;  // NCCL_NAME=VALUE, as the run's environment

  void add_to(CLI::App& app);
  // The library's request for these flags (sizes from -b/-e/-f/-i), each flag checked.
  [[nodiscard]] comm::CollectiveSweepRequest request() const;
  [[nodiscard]] std::string run() const;
};

// nccl-tests' size syntax: a whole number with an optional K, M or G suffix (powers of 1024).
double parse_size(const std::string& flag, const std::string& text);

// `--background OP:SIZE` (train, serve): a collective OP (not sendrecv) and a positive SIZE.
struct BackgroundCollective {
  comm::Op op = comm::Op::all_reduce;
  double bytes = 0;
};
BackgroundCollective parse_background(const std::string& flag, const std::string& text);

}  // namespace gf::cli
