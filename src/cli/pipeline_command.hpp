#pragma once
// `gpufabric pipeline`: the input pipeline of a node, stage by stage, with its bottleneck.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/cluster_options.hpp"
#include "work/pipeline.hpp"

namespace gf::cli {

// The input pipeline's options as `pipeline` and `train --input` spell them; InputError naming
// the flag for a bad one.
work::PipelineOptions parse_pipeline_options(const std::string& source, const std::string& decode,
                                             const std::string& memory, const std::string& prefetch,
                                             const std::string& loader_cores, const std::string& batch, bool gds,
                                             const std::string& network_fs);

struct PipelineOptions {
  ClusterOptions cluster;
  std::string input;
  std::string source = "nvme";
  std::string decode = "cpu";
  std::string memory = "pinned";
  std::string prefetch = "2";
  std::string loader_cores;  // empty: all but one core per GPU
  std::string batch;         // empty: the workload's
  std::string network_fs;    // empty: lustre
  bool gds = false;
  bool list = false;
  std::string format = "table";

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
};

}  // namespace gf::cli
