#pragma once
// Flow patterns that several algorithms share: NCCL's rings (Ring, PAT, and every operation
// but all_reduce of Hierarchical and point-to-point), the double binary tree between nodes
// (Tree, NVLSTree), the reduction through the NVSwitch (NVLS, NVLSTree, CollNetDirect) and
// CollNet's legs between each NIC's head GPU and its SHARP switch.
#include <functional>
#include <vector>

#include "comm/algorithms/emitter.hpp"
#include "comm/collective.hpp"

namespace gf::comm {

// Rings over every rank, one per channel (broadcast and reduce: a chain from or to `root`).
void emit_ring(const Communicator& c, Op op, double size, long root, Emitter& e);
// Double binary tree between nodes (reduce up, broadcast down), with a chain through each
// node's ranks unless `chains` is false (NVLS does the intra-node part).
void emit_tree(const Communicator& c, double size, bool chains, Emitter& e);
// A node of the double binary tree with the most tree edges (the closed form's representative).
inline long representative_tree_node(long nodes) { return nodes >= 3 ? 2 : 0; }
// A node of the leaf (by `leaf_of`, a communicator node's leaf switch) that the most tree edges
// cross: the leaf whose uplinks the double binary tree loads most.
long busiest_tree_leaf_node(const Communicator& c, const std::function<long(long)>& leaf_of);
// Every GPU sends its buffer into the NVSwitch and receives the reduced result back.
void emit_nvls(const Communicator& c, double size, Emitter& e);
// Each NIC's head GPU sends its share up to the SHARP switch and receives the reduced share back.
void emit_collnet_nics(const Communicator& c, double size, Emitter& e);
// The local rank whose NIC each of the node's NICs is (the first by local rank), -1 for a NIC
// that is no rank's nearest.
std::vector<int> collnet_heads(const Communicator& c);
// CollNetDirect's all_gather and reduce_scatter, one rank per NIC (rail): all_gather sends each
// rank's block up its NIC, the switch multicasts the rail's blocks to every node's NIC of that
// rail, and the rank writes them into its node's other ranks over NVLink; reduce_scatter reads
// the node's partial blocks for its rail over NVLink, sends them up to be reduced in the switch
// and receives its own reduced block back.
void emit_collnet_rails(const Communicator& c, Op op, double size, Emitter& e);

}  // namespace gf::comm
