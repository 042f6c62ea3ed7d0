#pragma once
// The machine a validation row was measured on: a preset, or a cluster file of the validation
// set (data/validation/clusters/) when no preset matches it.
#include <string>

#include "hw/catalog.hpp"
#include "topo/cluster_spec.hpp"

namespace gf::validate {

topo::ClusterSpec row_machine(const std::string& row_id, const std::string& preset, const std::string& cluster,
                              const hw::Catalog& catalog);

}  // namespace gf::validate
