#pragma once
// `gpufabric import sacct|k8s-pods|k8s-nodes FILE [-o OUT]`: the job and node files users already
// have (Slurm accounting, Kubernetes pod and node lists) written as `gpufabric schedule`'s job
// trace (--trace) and node list (--nodes-file). The conversions live in src/sched/import/; these
// are the `import` command's entries for them (import_command.cpp's table).
#include <CLI/CLI.hpp>

#include "cli/import_command.hpp"

namespace gf::cli {

ImportRun add_sacct_importer(CLI::App& sub);
ImportRun add_k8s_pods_importer(CLI::App& sub);
ImportRun add_k8s_nodes_importer(CLI::App& sub);

}  // namespace gf::cli
