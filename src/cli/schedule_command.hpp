#pragma once
// `gpufabric schedule`: replay a job trace (Alibaba PAI 2023, or gpufabric's CSV) on a cluster (a
// node list, or a preset and a node count) under one placement policy or all of them
// (--compare); FGD's fill experiment (--fill); the MIG partitioner (--mig-pack); elastic serving
// under an HPA (--autoscale SERVICE --load CURVE).
#include <CLI/CLI.hpp>

#include <string>

#include "cli/cluster_options.hpp"

namespace gf::cli {

struct ScheduleOptions {
  ClusterOptions cluster;
  std::string trace, nodes_file;
  std::string policy = "fgd";
  bool compare = false, list = false, skip_bad = false, quiet = false, fill = false, no_fill = false;
  std::string up_to = "1.3", repeats = "10", seed = "42";
  std::string time_scale, target_load;
  std::string restart = "60";
  std::string timeline, report, jobs_csv;
  std::string format = "table";
  std::string mig_pack, mig_gpus = "1", mig_strategy = "mixed";
  std::string autoscale, load;
  std::string cpu_milli, memory_mib;
  std::string share, share_replicas = "2", share_rate = "1", share_mig, isl = "1024", osl = "256";

  // Set by add_to: tells an option given from one left out, for the checks that refuse options
  // the chosen mode ignores.
  const CLI::App* app = nullptr;

  void add_to(CLI::App& app);
  [[nodiscard]] bool given(const char* flag) const { return app != nullptr && app->count(flag) > 0; }
  [[nodiscard]] std::string run() const;
};

}  // namespace gf::cli
