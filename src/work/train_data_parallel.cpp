#include "work/train_data_parallel.hpp"

#include <fmt/format.h>

#include <map>

#include "work/fsdp_step.hpp"
#include "work/nccl_sm_share.hpp"
#include "work/train_groups.hpp"

namespace gf::work {

namespace {

bool fully_sharded(Sharding s) {
  return s == Sharding::zero3 || s == Sharding::fsdp_full || s == Sharding::fsdp_hybrid;
}

// DDP's buckets, or a sharded optimizer's reduce-scatters and parameter all-gathers.
DdpOptions bucket_options(const DataParallelRequest& r) {
  const MemoryOptions& mem = r.memory;
  DdpOptions d;
  d.bucket_bytes = mem.bucket_bytes;
  d.accumulation = r.micro_batches;
  d.optimizer_s = r.optimizer_s;
  d.dtype = "float";  // fp32 main gradients
  d.record = r.options.record_timeline;
  const bool sharded = mem.sharding == Sharding::zero1 || mem.sharding == Sharding::zero2 ||
                       mem.sharding == Sharding::fsdp_grad_op || mem.distributed_optimizer;
  d.reduce_scatter = sharded;
  d.gather_bytes = sharded ? r.params * (mem.precision == Precision::fp32 ? 4 : 2) : 0;
  d.overlap_param_gather = mem.distributed_optimizer && mem.overlap_param_gather;
  return d;
}

// ZeRO-3 and FSDP FULL_SHARD shard over the whole data-parallel group; HYBRID_SHARD over the
// group's ranks inside one node, replicated across nodes.
DdpStep sharded_step(TrainingContext& cache, const DataParallelRequest& r, std::vector<std::string>& assumptions) {
  const topo::Topology& t = cache.topology();
  const TrainOptions& o = r.options;
  const long per_node = t.gpus_per_node();
  const auto all = on_gpus(gradient_groups(o.layout, o.order), o.placement);
  std::vector<std::vector<long>> shards;
  std::vector<long> replicas;  // the representative shard's peers on the other nodes
  if (r.memory.sharding == Sharding::fsdp_hybrid) {
    for (const auto& g : all) {
      std::map<long, std::vector<long>> by_node;
      for (long gpu : g) by_node[gpu / per_node].push_back(gpu);
      for (auto& [node, members] : by_node) shards.push_back(members);
    }
    const std::size_t position = 0;  // GPU 0 is the first rank of its node's shard
    std::map<long, std::vector<long>> by_node;
    for (long gpu : all.front()) by_node[gpu / per_node].push_back(gpu);
    for (const auto& [node, members] : by_node) replicas.push_back(members[position]);
  } else {
    shards = all;
  }
  FsdpOptions f;
  f.record = o.record_timeline;
  f.accumulation = r.micro_batches;
  f.optimizer_s = r.optimizer_s;
  f.param_bytes = r.memory.precision == Precision::fp32 ? 4 : 2;
  // Gradients are reduced in fp32 under mixed precision as the FSDP frameworks configure it by
  // default: torchtitan's `mixed_precision_reduce = "float32"` (FSDP2), Composer's `DEFAULT`
  // mixed precision (FSDP1: bf16 parameters, fp32 reduction), as Megatron's main gradients are.
  f.grad_bytes = 4;
  f.replicate = replicas.size() > 1;
  f.replica_fraction = 1.0 / static_cast<double>(shards.front().size());
  const std::string dtype = r.memory.precision == Precision::fp32 ? "float" : "bfloat16";
  const auto together = concurrent_groups(shards, per_node);
  const comm::Communicator& shard = cache.communicator(shards.front());
  const double reference = 25.0 * 1024 * 1024;  // a layer's worth, for the contention ratio
  const double gather_stretch = cache.contention(together, comm::Op::all_gather, reference, dtype, r.background);
  const double scatter_stretch = cache.contention(together, comm::Op::reduce_scatter, reference, dtype, r.background);
  const comm::Communicator* replica = f.replicate ? &cache.communicator(replicas) : nullptr;
  f.sm_share = sm_share(t, cache.collective(shard, comm::Op::all_gather, reference, dtype).channels);
  auto time_of = [&](comm::Op op, double bytes) {
    if (shard.ranks() < 2 && op != comm::Op::all_reduce) return CollectiveTimes{};
    const comm::Communicator& c = op == comm::Op::all_reduce ? *replica : shard;
    const auto& res = cache.collective(c, op, bytes, dtype);
    const double stretch = op == comm::Op::all_gather       ? gather_stretch
                           : op == comm::Op::reduce_scatter ? scatter_stretch
                                                            : 1.0;
    return CollectiveTimes{res.time.value(), (res.time + res.data_time * (stretch - 1)).value()};
  };
  assumptions.push_back(fmt::format(
      "fully sharded: parameters gathered in {} and gradients reduced in fp32 every micro-batch, one FSDP unit per "
      "layer, gathers one layer ahead",
      dtype));
  return fsdp_schedule(r.layers, f, time_of);
}

// DDP's buckets on every gradient group at once: on the flow engine (the reference), or each
// bucket's collective as the communication layer prices it for the representative group, its
// data part stretched by the groups it shares links with (measured once, on the flow engine,
// for a bucket of the cap's size all starting together).
DdpStep bucketed_step(TrainingContext& cache, const DataParallelRequest& r, const std::vector<LayerCost>& layers,
                      DdpOptions d, std::vector<std::string>& assumptions) {
  const topo::Topology& t = cache.topology();
  const TrainOptions& o = r.options;
  const auto& shape = cache.layout_groups(o.layout, o.order, o.placement, [&] {
    TrainingContext::LayoutGroups g;
    g.gradient = on_gpus(gradient_groups(o.layout, o.order), o.placement);
    g.concurrent = concurrent_groups(g.gradient, t.gpus_per_node());
    return g;
  });
  const auto& all = shape.gradient;
  if (o.full_graph) {
    std::vector<const comm::Communicator*> dp;
    for (const auto& g : all) dp.push_back(&cache.communicator(g));
    return ddp_step(dp, layers, d);
  }
  const auto& together = shape.concurrent;
  const comm::Op reduce = d.reduce_scatter ? comm::Op::reduce_scatter : comm::Op::all_reduce;
  const double reduce_stretch = cache.contention(together, reduce, d.bucket_bytes, d.dtype, r.background);
  const double gather_stretch =
      d.gather_bytes > 0 ? cache.contention(together, comm::Op::all_gather, d.bucket_bytes, d.dtype, r.background)
                         : 1.0;
  const comm::Communicator& group = cache.communicator(all.front());
  d.sm_share = sm_share(t, cache.collective(group, reduce, d.bucket_bytes, d.dtype).channels);
  auto time_of = [&](comm::Op op, double bytes) {
    const auto& res = cache.collective(group, op, bytes, d.dtype);
    const double stretch = op == comm::Op::all_gather ? gather_stretch : reduce_stretch;
    return CollectiveTimes{res.time.value(), (res.time + res.data_time * (stretch - 1)).value()};
  };
  DdpStep s = ddp_schedule(layers, d, time_of);
  if (together.size() < all.size())
    assumptions.push_back(
        fmt::format("the {} data-parallel groups on the representative group's nodes are simulated together; the "
                    "other {} share only the fabric above the leaves and are left out",
                    together.size(), all.size() - together.size()));
  return s;
}

// No gradient reduction: the layers back to back, then the optimizer.
DdpStep unreduced_step(const std::vector<LayerCost>& layers, const DdpOptions& d, long micro_batches) {
  DdpStep s;
  std::vector<double> ready;
  s.compute_s = run_layers(layers, micro_batches, 0, ready, d.record ? &s.events : nullptr);
  if (d.record) s.events.push_back({kComputeTrack, "optimizer", s.compute_s, d.optimizer_s});
  s.compute_s += d.optimizer_s;
  s.step_s = s.compute_s;
  return s;
}

}  // namespace

DataParallelStep data_parallel_step(TrainingContext& cache, const DataParallelRequest& r) {
  DataParallelStep out;
  DdpOptions d = bucket_options(r);
  const bool full_shard = fully_sharded(r.memory.sharding);
  out.reduce_scatter = d.reduce_scatter || full_shard;
  // Gradients reduced in bf16 (Megatron's --grad-reduce-in-bf16, NeMo's grad_sync_dtype=bf16):
  // half the bytes of every bucket, in buckets of the same cap.
  std::vector<LayerCost> halved;
  const std::vector<LayerCost>* layers = &r.layers;
  if (r.memory.grad_reduce_bf16 && !full_shard) {
    halved = r.layers;
    for (auto& layer : halved) layer.gradient_bytes /= 2;
    layers = &halved;
    d.dtype = "bfloat16";
    out.assumptions.push_back("gradients reduced in bf16");
  }
  const bool reduces = r.options.layout.dp * r.options.layout.cp > 1;
  if (reduces && full_shard)
    out.step = sharded_step(cache, r, out.assumptions);
  else if (reduces)
    out.step = bucketed_step(cache, r, *layers, d, out.assumptions);
  else
    out.step = unreduced_step(*layers, d, r.micro_batches);
  return out;
}

}  // namespace gf::work
