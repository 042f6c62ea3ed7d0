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

// A one-workload training plan (GPT-3 1.3B on DGX A100) over the given node counts, e.g. "[1, 2]":
// the smallest plan the planner and its store are tested with.
inline std::string tiny_training_plan(const std::string& node_counts) {
  return "name: tiny\nworkloads:\n  - name: t\n    kind: training\n    model: gpt3-1.3b\n    tokens: 26e9\n"
         "    global_batch: 64\ndesign:\n  nodes: [dgx-a100]\n  node_counts: " +
         node_counts + "\n";
}

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

// The same, returning the InputError itself, for tests of its file, line and field.
template <typename F>
InputError thrown_input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError({}, "", "");
}

}  // namespace gf::test
