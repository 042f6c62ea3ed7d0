#pragma once
// `gpufabric import sacct|k8s-pods|k8s-nodes FILE -o OUT`: the job and node files users already
// have (Slurm accounting, Kubernetes pod and node lists) written as `gpufabric schedule`'s job
// trace (--trace) and node list (--nodes-file). The conversions live in src/sched/import/; this
// maps the command line to them and says what was kept and what was left out.
#include <CLI/CLI.hpp>

#include <string>

namespace gf::cli {

struct JobImportOptions {
  std::string input, output;
  CLI::App* sacct = nullptr;
  CLI::App* k8s_pods = nullptr;
  CLI::App* k8s_nodes = nullptr;

  // Whether one of the three importers was the subcommand given.
  [[nodiscard]] bool parsed() const;
  // Writes OUT whole (only after the schedule readers accept it) and returns the summary.
  [[nodiscard]] std::string run() const;
};

// Adds `sacct`, `k8s-pods` and `k8s-nodes` under `import_app` (the `import` subcommand), each
// taking FILE and -o/--output OUT into `options`.
void add_job_importers(CLI::App& import_app, JobImportOptions& options);

}  // namespace gf::cli
