#pragma once
// One GPU's training memory, term by term (work/training_memory.hpp), as `train` prints it in
// its table and its JSON: both from the same terms, in GiB as nvidia-smi counts memory.
#include <string>

#include <nlohmann/json.hpp>

#include "work/training_memory.hpp"

namespace gf::report {

// {"weights_GiB": ..., ..., "total_GiB": ...}: every term of the breakdown.
nlohmann::json memory_json(const work::MemoryBreakdown& m);
// A table of the terms, each with its share of the GPU's memory (`gpu_memory`, bytes).
std::string memory_table(const work::MemoryBreakdown& m, double gpu_memory);

}  // namespace gf::report
