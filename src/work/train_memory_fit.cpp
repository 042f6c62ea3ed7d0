#include "work/train_memory_fit.hpp"

namespace gf::work {

MemoryFit fit_memory(const MemoryFitRequest& r) {
  MemoryFit out;
  out.options = r.memory;
  out.options.micro_batches = r.shape.micro_batches;
  out.options.gpus_per_node = r.gpus_per_node;
  out.options.dualpipe = r.shape.moe_overlap == MoeOverlap::dualpipe;
  out.breakdown = training_memory(r.model, r.layout, out.options);
  out.gpu_memory = r.gpu.memory.value();
  out.fits = out.breakdown.total <= out.gpu_memory;
  if (!out.fits) out.fit_options = fit_options(r.model, r.layout, out.options, r.shape.global_batch, out.gpu_memory);
  return out;
}

}  // namespace gf::work
