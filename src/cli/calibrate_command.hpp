#pragma once
// `gpufabric calibrate`: fit the model's link and transport parameters to the nccl-tests logs,
// nvbandwidth outputs and probe profiles the user has for their cluster, and write the overlay
// that --calibration applies.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/cluster_options.hpp"

namespace gf::cli {

struct CalibrateOptions {
  ClusterOptions cluster;
  std::vector<std::string> logs;  // FILE or FILE:OP
  std::vector<std::string> nvbandwidth;
  std::vector<std::string> profiles;  // probe --save JSON
  std::string gpus;                   // empty: every GPU
  std::vector<std::string> env;
  std::string output;
  std::string format = "table";

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
};

}  // namespace gf::cli
