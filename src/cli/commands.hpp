#pragma once
#include <ostream>

namespace gf::cli {

// Runs the `gpufabric` command line. Output is written only when the command succeeds, so a
// failure never leaves a half-written result. Returns the process exit code: 0 on success,
// 2 on bad input (with one message on `err`), 1 on an internal error.
int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace gf::cli
