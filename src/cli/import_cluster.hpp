#pragma once
// The importers that write a cluster file: `import nccl-topo` and `import topo-m`.
#include <CLI/CLI.hpp>

#include <functional>

#include "cli/import_command.hpp"

namespace gf::cli {

ImportRun add_nccl_topo_importer(CLI::App& sub);
ImportRun add_topo_matrix_importer(CLI::App& sub);

}  // namespace gf::cli
