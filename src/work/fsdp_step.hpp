#pragma once
// One step of fully sharded data parallelism, as PyTorch FSDP (FULL_SHARD, HYBRID_SHARD) and
// DeepSpeed ZeRO-3 run it, in closed form. Each layer is one FSDP unit: its parameters are
// all-gathered over the shard group before its forward and again before its backward, and its
// gradients reduce-scattered after its backward, for every micro-batch (FSDP reduces inside
// gradient accumulation unless told not to; ZeRO-3 likewise). Three streams, as FSDP has them:
// compute; the all-gathers ("unshard" stream), issued one layer ahead and at most two in flight
// (limit_all_gathers, forward and BACKWARD_PRE prefetch); the reduce-scatters ("post-backward"
// stream), each after its layer's backward. Hybrid sharding adds, after each layer's last
// reduce-scatter, an all-reduce of its shard across the replicas.
#include <vector>

#include "work/ddp_step.hpp"

namespace gf::work {

struct FsdpOptions {
  long accumulation = 1;          // micro-batches per step
  double optimizer_s = 0;         // on the local shard, after the last reduction
  double param_bytes = 2;         // bytes per parameter as gathered (the compute precision)
  double grad_bytes = 4;          // bytes per gradient as reduced (fp32 under mixed precision)
  bool replicate = false;         // hybrid: all-reduce the shard across replicas
  double replica_fraction = 1.0;  // the shard's fraction of a layer's parameters (1 / shard group size)
  bool record = false;            // fill DdpStep::events
  double sm_share = 0;            // SMs NCCL's kernels hold while they run (see DdpOptions)
};

// `layers` in forward order (gradient_bytes as fp32: 4 bytes per parameter). `time_of(op, bytes)`
// prices all_gather and reduce_scatter on the shard group (nccl-tests' sizes: the whole layer)
// and all_reduce on the replica group.
DdpStep fsdp_schedule(const std::vector<LayerCost>& layers, const FsdpOptions& o, const CollectiveTime& time_of);

}  // namespace gf::work
