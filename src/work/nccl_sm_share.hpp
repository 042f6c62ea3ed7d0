#pragma once
// The share of a GPU's SMs an NCCL kernel holds while it runs: one CTA per channel
// (data/compute/efficiency.yaml, comm_sm_use). Compute that overlaps the collective runs that
// much slower.
#include "topo/topology.hpp"

namespace gf::work {

// 0 where the efficiency file has no SM count for the cluster's GPU.
double sm_share(const topo::Topology& t, int channels);

}  // namespace gf::work
