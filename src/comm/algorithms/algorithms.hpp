#pragma once
// The one instance of each algorithm, defined in its own file here, for the registry table in
// comm/algorithm.cpp (one line each).
#include "comm/algorithm.hpp"

namespace gf::comm::algorithms {

const CollectiveAlgorithm& ring();
const CollectiveAlgorithm& tree();
const CollectiveAlgorithm& nvls();
const CollectiveAlgorithm& nvls_tree();
const CollectiveAlgorithm& collnet_direct();
const CollectiveAlgorithm& collnet_chain();
const CollectiveAlgorithm& pat();
const CollectiveAlgorithm& hierarchical();
const CollectiveAlgorithm& p2p();

}  // namespace gf::comm::algorithms
