#include "report/pipeline_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "report/table.hpp"

namespace gf::report {

namespace {

// Samples per second with an SI suffix once they run long. A stage that could pass more than a
// billion samples per second (a D2H copy of a 4-byte loss per batch, modelled as bytes over a
// PCIe link) is never what limits a node; "6532.7G" would read as a figure to trust, so the
// table says only that it is beyond a billion (JSON keeps the number).
std::string samples(double v) {
  if (!std::isfinite(v)) return "-";
  if (v >= 1e9) return "> 1G";
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (v >= 1e5) return fmt::format("{:.0f}k", v / 1e3);
  return fixed(v, v < 100 ? 1 : 0);
}

std::string options_line(const work::PipelineOptions& o) {
  return fmt::format("source {}, decode on {}, {} buffers, prefetch {}{}", work::to_string(o.source),
                     work::to_string(o.decode), work::to_string(o.buffers), o.prefetch,
                     o.gds ? ", GPUDirect Storage" : "");
}

}  // namespace

std::string pipeline_table(const PipelineReport& rep) {
  const auto& r = rep.result;
  using A = TextTable::Align;
  TextTable t(
      {"stage", "resource", "alone (samples/s)", "loaded (samples/s)", "per GPU now", "per GPU max", "utilisation"},
      {A::left, A::left, A::right, A::right, A::right, A::right, A::right});
  auto gb = [](std::optional<Bandwidth> b) { return b ? fmt::format("{:.2f} GB/s", in_GBps(*b)) : std::string(); };
  for (const auto& s : r.stages) {
    t.add_row({s.name, s.resource, samples(s.capacity), samples(s.loaded), gb(s.steady), gb(s.alone),
               fmt::format("{:.0f}%", s.utilisation * 100)});
  }
  std::string out = fmt::format("Input pipeline: {} on {} ({} GPUs per node, batch {} per GPU)\n", rep.workload,
                                rep.cluster, r.gpus, r.batch);
  out += "  " + options_line(rep.options) + "\n\n";
  out += t.render(2);
  out += fmt::format("\n  steady state   {:.0f} samples/s per node, {:.1f} per GPU{}\n", r.samples_per_second,
                     r.per_gpu, r.overlapped ? "" : " (no prefetch: stages run in turn)");
  out += fmt::format("  GPUs compute   {:.0f} samples/s per node at full speed\n", r.compute_capacity);
  out += fmt::format("  bottleneck     {}\n", r.bottleneck);
  if (!r.bottleneck_link.empty()) out += fmt::format("  busiest link   {}\n", r.bottleneck_link);
  out += fmt::format("  GPU idle       {:.0f}% of the time{}\n", r.gpu_idle * 100,
                     r.gpu_idle > 0.005 ? " (starved for input)" : "");
  if (!rep.what_ifs.empty()) {
    out += "\nWhat if:\n";
    for (const auto& w : rep.what_ifs) out += "  - " + w + "\n";
  }
  out +=
      "\nalone: the stage by itself with every GPU of the node pulling at once; loaded: with every stage moving data "
      "at the same time (shared PCIe, DRAM and NIC links split max-min). Utilisation = steady state / loaded. "
      "per GPU now: bytes each GPU's stage moves at the steady state; max: running alone. > 1G: more than a billion "
      "samples/s, never the limit.\n";
  return out;
}

std::string pipeline_json(const PipelineReport& rep) {
  const auto& r = rep.result;
  nlohmann::ordered_json j;
  j["cluster"] = rep.cluster;
  j["workload"] = rep.workload;
  j["options"] = {{"source", work::to_string(rep.options.source)},
                  {"decode", work::to_string(rep.options.decode)},
                  {"buffers", work::to_string(rep.options.buffers)},
                  {"prefetch", rep.options.prefetch},
                  {"gds", rep.options.gds},
                  {"loader_cores", r.loader_cores},
                  {"batch_per_gpu", r.batch}};
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& s : r.stages) {
    nlohmann::ordered_json e;
    e["stage"] = s.name;
    e["resource"] = s.resource;
    e["capacity_samples_per_s"] = num(s.capacity);
    e["loaded_samples_per_s"] = num(s.loaded);
    e["utilisation"] = num(s.utilisation);
    if (s.steady) e["per_gpu_steady_GBps"] = in_GBps(*s.steady);
    if (s.rate) e["per_gpu_loaded_GBps"] = in_GBps(*s.rate);
    if (s.alone) e["per_gpu_alone_GBps"] = in_GBps(*s.alone);
    stages.push_back(e);
  }
  j["stages"] = stages;
  j["samples_per_second"] = r.samples_per_second;
  j["samples_per_second_per_gpu"] = r.per_gpu;
  j["compute_capacity_samples_per_s"] = r.compute_capacity;
  j["bottleneck"] = r.bottleneck;
  if (!r.bottleneck_link.empty()) j["bottleneck_link"] = r.bottleneck_link;
  j["gpu_idle_fraction"] = r.gpu_idle;
  j["what_ifs"] = rep.what_ifs;
  return j.dump(2) + "\n";
}

}  // namespace gf::report
