#pragma once
// The one instance of each algorithm, defined in its own file here, for the registry table in
// comm/algorithm.cpp (one line each). Constant-initialized: usable before main and from any
// static initializer, with no guard on the lookup.
#include "comm/algorithm.hpp"

namespace gf::comm::algorithms {

extern const CollectiveAlgorithm* const ring;
extern const CollectiveAlgorithm* const tree;
extern const CollectiveAlgorithm* const nvls;
extern const CollectiveAlgorithm* const nvls_tree;
extern const CollectiveAlgorithm* const collnet_direct;
extern const CollectiveAlgorithm* const collnet_chain;
extern const CollectiveAlgorithm* const pat;
extern const CollectiveAlgorithm* const hierarchical;
extern const CollectiveAlgorithm* const p2p;

}  // namespace gf::comm::algorithms
