#pragma once
// `gpufabric import KIND FILE [-o OUT]`: turns a file the user already has into a gpufabric input
// (a cluster file, a job trace, a node list). Each kind is one Importer in the table in
// import_command.cpp; adding a kind is one function that adds its options and returns how to run,
// and one line in that table.
#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/output_files.hpp"
#include "cli/subcommand.hpp"

namespace gf::cli {

// What an importer produced: the text to write, the warnings about what the input left out (to
// stderr, one per line), and a one-line summary printed when the text goes to a file.
struct ImportOutput {
  std::string text;
  std::vector<std::string> warnings;
  std::string summary;
  std::vector<NamedPath> inputs;  // the files read: -o may not name one of them
};

// Runs an importer once its command line is parsed; `output` is -o's path (empty: standard
// output), for the summary's next step ("Replay it: ... --trace OUT").
using ImportRun = std::function<ImportOutput(const std::string& output)>;

// One importer. `add_to` adds the importer's own positional FILE and options to its subcommand
// and returns the function that runs it once the command line is parsed (reading the values it
// bound); the table adds `-o/--output` to every importer.
struct Importer {
  const char* name;
  const char* description;
  std::function<ImportRun(CLI::App& sub)> add_to;
};

// The importers of the `import` command.
const std::vector<Importer>& importers();

// Adds the importers to the `import` subcommand `cmd`; its runner runs the chosen one: the text
// goes to -o's file (written whole) or is returned, its warnings go to `err`.
SubcommandRun add_import_command(CLI::App& cmd, std::ostream& err);

}  // namespace gf::cli
