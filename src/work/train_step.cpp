#include "work/train_step.hpp"

#include "work/train_assembly.hpp"

namespace gf::work {

TrainResult train_step(const topo::Topology& t, const ModelSpec& m, const TrainOptions& o) {
  TrainingContext context(t);
  return train_step(context, m, o);
}

// The phases in the order their refusals and assumptions come: each takes what the ones before
// it found, and the assembly puts their results together.
TrainResult train_step(TrainingContext& cache, const ModelSpec& m, const TrainOptions& o) {
  const topo::Topology& t = cache.topology();
  const ParallelLayout& l = o.layout;
  // Placement, and the request checked against it and the model.
  const long gpus = job_gpus(t, o);
  const TrainShape shape = check_train_shape(m, o, gpus);
  // Compute and memory; the groups of the representative GPU 0.
  const MemoryFit memory = fit_memory({m, l, o.memory, shape, t.gpu_spec(), t.gpus_per_node()});
  const ComputeRates rates = compute_rates({t.gpu_spec(), o.memory.precision, o.gemm_tflops, o.gemm_source});
  const RankGroups groups = representative_groups(cache, {l, o.order, o.placement, m.is_transformer()});
  // The stage that paces the step, with the collectives in its critical path.
  const std::string dtype = o.memory.precision == Precision::fp32 ? "float" : "bfloat16";
  InlineComm collectives;
  StageLayers stage;
  PipelineSend send;
  if (m.is_transformer()) {
    const TransformerCosts costs = transformer_costs({m, l, memory.options, rates.context});
    collectives = inline_collectives(
        cache, {groups, l, rates.context, dtype, shape.moe_overlap, shape.micro_batches, costs, m.moe.has_value()});
    stage = representative_stage({m, l, shape, costs, collectives, memory.options.kernels});
    if (l.pp > 1)
      send = price_pipeline_send(
          cache, {l, o.order, o.placement, costs.tokens, m.hidden, o.memory.precision, groups.tp, dtype});
  } else {
    stage = generic_stage({m, rates.context, shape.micro_batch, o.memory.precision});
  }
  const double optimizer_s = optimizer_seconds(rates.context, memory.options, l, stage.params);
  // The gradient reduction (beside another job's traffic, when there is one) and the pipeline.
  const PlacedBackground background = background_job({t, o, gpus});
  const DataParallelStep data_parallel =
      data_parallel_step(cache, {o, memory.options, stage.layers, shape.micro_batches, optimizer_s, stage.params,
                                 background.job.gpus.empty() ? nullptr : &background.job});
  const PipelineSchedule pipeline = pipeline_schedule(
      cache, {l, o.order, o.placement, stage.layers, shape.micro_batches, shape.moe_overlap == MoeOverlap::dualpipe,
              send, dtype, o.full_graph, o.record_timeline});
  return assemble_step({t, m, o, gpus, shape, memory, rates, groups, collectives, stage, optimizer_s, background,
                        data_parallel, pipeline});
}

}  // namespace gf::work
