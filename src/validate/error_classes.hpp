#pragma once
// The band classes of the model's own objects (a topology, a model): what a command asks the
// band table with, and what a validation row is filed under, computed the same way for both.
#include <string>
#include <vector>

#include "band/band_class.hpp"
#include "topo/topology.hpp"
#include "work/model_spec.hpp"

namespace gf::validate {

// The path a collective over `nodes` nodes of `t` takes: its GPU fabric inside a node ("nvswitch",
// "nvlink", "pcie", or "no-p2p" where peer-to-peer is off or the GPU cannot do it over PCIe), its
// network across nodes.
band::CollectivePath collective_path(const topo::Topology& t, long nodes);

// A training run of `m` on `gpu_name`.
std::vector<std::string> training_classes(const std::string& gpu_name, const work::ModelSpec& m);

}  // namespace gf::validate
