#pragma once
// The machine a validation row was measured on: a preset, or a cluster file of the validation
// set (data/validation/clusters/) when no preset matches it. And where each row came from, so an
// error in building or predicting it names the file, line and key of the row rather than the
// command-line option that the key stands for.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"

namespace gf::validate {

struct RowOrigin {
  SourceLocation where;                        // the row itself
  std::string path;                            // "rows[3]", as in parse errors
  std::string id;                              // the row's id
  std::map<std::string, SourceLocation> keys;  // where each key the row gives sits

  // Reads the locations of a row's keys (the row has passed Fields' checks: every key a name).
  static RowOrigin of(const YAML::Node& row, const std::string& file, std::string path);
  // `e` re-addressed to this row: an option name (--preset, --nics-per-node) becomes the row's
  // key (preset, nics_per_node) at its line; an error with no location names the row's line.
  [[nodiscard]] InputError blame(const InputError& e) const;
  // An error about one of this row's keys.
  [[nodiscard]] InputError error(const std::string& key, const std::string& problem,
                                 const std::string& valid = {}) const;
};

// A row's `key`, one of `valid`, or `fallback` when the row leaves it out. Anything else is an
// InputError at its line naming the field and the valid values: a typo ("bf61") must not become
// bf16, nor an unknown recompute none, and change the prediction silently.
std::string row_choice(const YAML::Node& row, const std::string& file, const char* key, const std::string& fallback,
                       const std::vector<std::string>& valid);

// Runs `f` (which builds or predicts one row) so that its InputErrors name the row.
template <typename F>
decltype(auto) at_row(const RowOrigin& origin, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const InputError& e) {
    throw origin.blame(e);
  }
}

topo::ClusterSpec row_machine(const RowOrigin& row, const std::string& preset, const std::string& cluster,
                              const hw::Catalog& catalog);

}  // namespace gf::validate
