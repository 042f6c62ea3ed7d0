#pragma once
// Concrete "what if" lines for a pipeline: each reruns the model with one thing changed
// (pinned buffers, GPU decode, more cores, page cache, prefetch, GPUDirect Storage) and says
// what it would do, in the units a user would measure. None is canned text.
#include <string>
#include <vector>

#include "work/pipeline.hpp"

namespace gf::work {

std::vector<std::string> what_ifs(const topo::Topology& topology, const hw::Catalog& catalog, const InputWorkload& w,
                                  const PipelineOptions& o, const PipelineResult& r);

// Loader cores needed to decode `samples_per_second` on the CPU.
int cores_needed(const InputWorkload& w, const PipelineOptions& o, double samples_per_second);

}  // namespace gf::work
