#pragma once
// `gpufabric presets`, `catalog` and `topo`: what is built in, and what a cluster looks like.
#include <CLI/CLI.hpp>

#include <ostream>

#include "cli/subcommand.hpp"

namespace gf::cli {

SubcommandRun add_presets_command(CLI::App& app, std::ostream& err);
SubcommandRun add_catalog_command(CLI::App& app, std::ostream& err);
SubcommandRun add_topo_command(CLI::App& app, std::ostream& err);

// --format's value, or an InputError listing the valid ones.
void check_format(const std::string& format, std::initializer_list<const char*> valid);

}  // namespace gf::cli
