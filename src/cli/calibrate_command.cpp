#include "cli/calibrate_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "calib/calibrate.hpp"
#include "cli/output_files.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "probe/profile_json.hpp"
#include "report/table.hpp"
#include "topo/topology.hpp"

namespace gf::cli {

namespace {

// A --log argument's file and collective: FILE, or FILE:OP when the tail names a collective.
std::pair<std::string, std::string> log_file(const std::string& spec) {
  if (const auto colon = spec.rfind(':'); colon != std::string::npos && colon > 0) {
    const std::string tail = spec.substr(colon + 1);
    if (comm::parse_op(tail)) return {spec.substr(0, colon), tail};
  }
  return {spec, ""};
}

}  // namespace

void CalibrateOptions::add_to(CLI::App& app) {
  cluster.add_to(app);
  app.add_option("--log", logs,
                 "An nccl-tests output file, as printed (FILE, or FILE:OP when the file does not say which "
                 "collective it ran); repeatable");
  app.add_option("--nvbandwidth", nvbandwidth,
                 "nvbandwidth's text output, as printed (its H2D, D2H and device-to-device copy-engine testcases "
                 "are fitted); repeatable");
  app.add_option("--profile", profiles,
                 "A profile written by 'gpufabric probe --save' (its H2D/D2H, GPU-to-GPU copies and NCCL "
                 "all_reduce); repeatable");
  app.add_option("--gpus", gpus,
                 "Ranks the logs ran with, 1 or more, spread evenly over the nodes (default: every GPU)");
  app.add_option("--env", env, "NCCL environment of the runs, NAME=VALUE, repeatable (as for collective)");
  app.add_option("-o,--output", output, "Write the calibration overlay (YAML) to this file");
  app.add_option("--format", format, "table | json");
}

std::string CalibrateOptions::run() const {
  if (format != "table" && format != "json") throw InputError({}, "--format", "got '" + format + "'", "table, json");
  // Check the output can be written before fitting, so a typo does not cost the fit; it is
  // written whole once the fit succeeds, never over one of the measurements it is fitted to.
  if (!output.empty()) {
    auto inputs = cluster_inputs(cluster);
    for (const auto& spec : logs) inputs.push_back({"--log", log_file(spec).first});
    for (const auto& file : nvbandwidth) inputs.push_back({"--nvbandwidth", file});
    for (const auto& file : profiles) inputs.push_back({"--profile", file});
    refuse_same_file(inputs, {{"-o", output}});
    check_writable(output, "-o");
  }
  // 0 to the calibration: every GPU, which is what leaving --gpus out means.
  const long ranks = gpus.empty() ? 0 : parse_whole("--gpus", gpus, 1, topo::kMaxGpus);
  comm::NcclConfig nccl;
  std::vector<std::string> ignored;
  for (const auto& e : env) comm::apply_nccl_assignment(nccl, e, &ignored);
  if (logs.empty() && nvbandwidth.empty() && profiles.empty()) {
    throw InputError({}, "--log", "no measurement to fit", "--log FILE, --nvbandwidth FILE or --profile FILE");
  }
  calib::CalibrationInputs inputs;
  std::vector<calib::NcclTestsLog>& parsed = inputs.nccl;
  for (const auto& spec : logs) {
    const auto [file, op] = log_file(spec);
    parsed.push_back(calib::parse_nccl_tests_log(read_text_file(file, "--log"), file, op));
  }
  for (const auto& file : nvbandwidth) {
    calib::add_nvbandwidth(calib::parse_nvbandwidth_output(read_text_file(file, "--nvbandwidth"), file), inputs);
  }
  for (const auto& file : profiles) {
    calib::add_profile(probe::profile_from_json(read_text_file(file, "--profile"), file), file, inputs);
  }
  const hw::Catalog catalog = cluster.load_catalog();
  const topo::ClusterSpec spec = cluster.load_spec(catalog);
  const auto result = calib::calibrate(spec, catalog, ranks, nccl, inputs, cluster.nccl_params());
  const std::size_t inputs_count = logs.size() + nvbandwidth.size() + profiles.size();
  const std::string overlay = calib::calibration_yaml(result);
  if (!output.empty()) write_whole(output, overlay, "-o");
  if (format == "json") {
    nlohmann::json j;
    j["cluster"] = result.cluster;
    j["ranks"] = result.ranks;
    for (const auto& p : result.parameters)
      j["parameters"].push_back(
          {{"name", p.name}, {"catalog", p.catalog}, {"fitted", p.fitted}, {"meaning", p.meaning}});
    for (const auto& f : result.files) {
      j["files"].push_back({{"file", f.file},
                            {"op", f.op},
                            {"rows", f.rows},
                            {"time_mape_catalog", f.mape_catalog},
                            {"time_mape_fitted", f.mape_fitted}});
    }
    j["notes"] = result.notes;
    j["overlay"] = overlay;
    return j.dump(2) + "\n";
  }
  using A = report::TextTable::Align;
  std::string out =
      fmt::format("# calibration of {} ({} ranks on {} node{}), fitted to {} file{}\n", result.cluster, result.ranks,
                  result.nodes, result.nodes == 1 ? "" : "s", inputs_count, inputs_count == 1 ? "" : "s");
  for (const auto& n : result.notes) out += "  note: " + n + "\n";
  report::TextTable params({"parameter", "catalog", "fitted", "change", "meaning"},
                           {A::left, A::right, A::right, A::right, A::left});
  for (const auto& p : result.parameters) {
    params.add_row({p.name, fmt::format("{:.4g}", p.catalog), fmt::format("{:.4g}", p.fitted),
                    p.catalog != 0 ? fmt::format("{:+.1f}%", 100.0 * (p.fitted / p.catalog - 1)) : "-", p.meaning});
  }
  out += params.render() + "\n";
  report::TextTable files({"file", "op / testcase", "rows", "time error, catalog", "time error, fitted"},
                          {A::left, A::left, A::right, A::right, A::right});
  for (const auto& f : result.files) {
    files.add_row({f.file, f.op, std::to_string(f.rows), fmt::format("{:.1f}%", 100 * f.mape_catalog),
                   fmt::format("{:.1f}%", 100 * f.mape_fitted)});
  }
  out += files.render();
  out +=
      output.empty() ? "\n" + overlay : fmt::format("\n# overlay written to {} (use it with --calibration)\n", output);
  return out;
}

}  // namespace gf::cli
