#pragma once
// Helpers shared by the tests: the built-in catalog, loading presets, and checks that a route
// is a connected chain of links.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "hw/catalog.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"

namespace gf::test {

inline const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::builtin();
  return c;
}

inline topo::Topology preset(const std::string& name, const topo::ClusterOverrides& o = {}) {
  auto spec = topo::load_preset(name, catalog());
  topo::apply_overrides(spec, o, catalog());
  return topo::Topology(spec, catalog());
}

inline std::string data_file(const std::string& name) { return std::string(GPUFABRIC_TEST_DATA) + "/" + name; }

// Every link starts where the previous one ended, from `from` to `to`.
inline ::testing::AssertionResult connected(const topo::Graph& g, const topo::Route& r, topo::DeviceId from,
                                            topo::DeviceId to) {
  if (r.links.empty())
    return from == to ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "empty route";
  topo::DeviceId at = from;
  for (std::size_t i = 0; i < r.links.size(); ++i) {
    const auto& l = g.link(r.links[i]);
    if (l.src != at) {
      return ::testing::AssertionFailure()
             << "hop " << i << " starts at " << g.name(l.src) << ", expected " << g.name(at);
    }
    at = l.dst;
  }
  if (at != to) return ::testing::AssertionFailure() << "route ends at " << g.name(at) << ", expected " << g.name(to);
  return ::testing::AssertionSuccess();
}

// The gpufabric command run in-process, with what it printed.
struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

inline CliResult run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "gpufabric");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Runs an expression expected to throw InputError and returns its message.
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

}  // namespace gf::test
