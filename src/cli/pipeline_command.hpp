#pragma once
// `gpufabric pipeline`: the input pipeline of a node, stage by stage, with its bottleneck.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/cluster_options.hpp"

namespace gf::cli {

struct PipelineOptions {
  ClusterOptions cluster;
  std::string input;
  std::string source = "nvme";
  std::string decode = "cpu";
  std::string memory = "pinned";
  std::string prefetch = "2";
  std::string loader_cores = "0";
  std::string batch = "0";
  std::string network_fs = "lustre";
  bool gds = false;
  bool list = false;
  std::string format = "table";

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
};

}  // namespace gf::cli
