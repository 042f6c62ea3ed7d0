#pragma once
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"

namespace gf::topo {

// Parses a cluster description. Model names are checked against the catalog here, so an
// unknown GPU is reported at its line.
ClusterSpec parse_cluster(const std::string& text, const std::string& file, const hw::Catalog& catalog);
// `field` names where the path came from in an error about the file itself (missing, unreadable).
ClusterSpec load_cluster_file(const std::string& path, const hw::Catalog& catalog,
                              const std::string& field = "--cluster");

// Built-in presets (data/presets/*.yaml).
std::vector<std::string> preset_names();
ClusterSpec load_preset(const std::string& name, const hw::Catalog& catalog);

// Applies overrides; values are checked (e.g. --network against the catalog).
void apply_overrides(ClusterSpec& spec, const ClusterOverrides& o, const hw::Catalog& catalog);

}  // namespace gf::topo
