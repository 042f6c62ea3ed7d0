#pragma once
// The table of `gpufabric`'s subcommands. A subcommand is one file that defines how it adds its
// options and runs, and one line in subcommands.cpp's table: the command line (commands.cpp)
// knows nothing else of it.
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace gf::cli {

// Runs a subcommand once its command line is parsed; returns what it prints on stdout.
using SubcommandRun = std::function<std::string()>;

struct Subcommand {
  const char* name;
  const char* description;
  // Adds the subcommand's options to the CLI11 app made for it and returns its runner; `err` is
  // where its warnings go (stderr from the executable, Python warnings from the module).
  std::function<SubcommandRun(CLI::App& app, std::ostream& err)> add_to;
};

// The subcommands, in the order `gpufabric --help` lists them.
const std::vector<Subcommand>& subcommands();

// The runner of an options struct with `add_to(CLI::App&)` and `run() const` (every subcommand's
// XxxOptions): the struct lives as long as the runner.
template <typename Options>
SubcommandRun add_options(CLI::App& app, std::ostream& /*err*/) {
  auto options = std::make_shared<Options>();
  options->add_to(app);
  return [options] { return options->run(); };
}

}  // namespace gf::cli
