#include "report/memory_breakdown.hpp"

#include <fmt/format.h>

#include <vector>

#include "report/table.hpp"

namespace gf::report {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct Term {
  const char* label;  // in the table
  const char* key;    // in the JSON
  double bytes;
};

// The terms in the order a reader adds them up.
std::vector<Term> terms(const work::MemoryBreakdown& m) {
  return {{"weights", "weights_GiB", m.weights},
          {"gradients", "gradients_GiB", m.gradients},
          {"fp32 main gradients", "main_gradients_GiB", m.main_gradients},
          {"optimizer states", "optimizer_GiB", m.optimizer},
          {"activations", "activations_GiB", m.activations},
          {"communication buffers", "communication_buffers_GiB", m.buffers},
          {"allocator fragmentation", "fragmentation_GiB", m.fragmentation}};
}

}  // namespace

nlohmann::json memory_json(const work::MemoryBreakdown& m) {
  nlohmann::json j;
  for (const Term& term : terms(m)) j[term.key] = term.bytes / kGiB;
  j["nccl_buffers_GiB"] = m.nccl_buffers / kGiB;
  j["total_GiB"] = m.total / kGiB;
  j["pipeline_stage"] = m.stage;
  return j;
}

std::string memory_table(const work::MemoryBreakdown& m, double gpu_memory) {
  TextTable t({"memory per GPU", "GiB", "of the GPU"},
              {TextTable::Align::left, TextTable::Align::right, TextTable::Align::right});
  auto row = [&](const std::string& label, double bytes) {
    t.add_row({label, fmt::format("{:.2f}", bytes / kGiB),
               gpu_memory > 0 ? fmt::format("{:.1f}%", 100 * bytes / gpu_memory) : std::string("-")});
  };
  for (const Term& term : terms(m)) row(term.label, term.bytes);
  row("total", m.total);
  return t.render();
}

}  // namespace gf::report
