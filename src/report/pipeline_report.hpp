#pragma once
// `gpufabric pipeline` output: the stage table with throughput and utilisation, the
// bottleneck, the GPUs' idle fraction and the what-if lines; or the same as JSON.
#include <string>
#include <vector>

#include "work/pipeline.hpp"

namespace gf::report {

struct PipelineReport {
  std::string cluster;
  std::string workload;
  work::PipelineOptions options;
  work::PipelineResult result;
  std::vector<std::string> what_ifs;
};

std::string pipeline_table(const PipelineReport& r);
std::string pipeline_json(const PipelineReport& r);

}  // namespace gf::report
