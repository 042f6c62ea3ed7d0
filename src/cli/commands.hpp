#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace gf::cli {

// Runs the `gpufabric` command line. Output is written only when the command succeeds, so a
// failure never leaves a half-written result. Returns the process exit code: 0 on success,
// 2 on bad input (with one message on `err`), 1 on an internal error.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// One command (the arguments after `gpufabric`), its output returned as the CLI would print it
// (before the terminal escaping of `run`); warnings that the CLI prints on stderr go to `err`. Bad input throws
// InputError, or CLI::ParseError for a malformed command line; `--help` returns the help text. The Python module runs
// its requests through this, so its numbers are the CLI's.
std::string execute(const std::vector<std::string>& args, std::ostream& err);

}  // namespace gf::cli
