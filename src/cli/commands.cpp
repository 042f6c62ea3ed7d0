#include "cli/commands.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <new>
#include <nlohmann/json.hpp>

#include "cli/calibrate_command.hpp"
#include "cli/cluster_options.hpp"
#include "cli/collective_command.hpp"
#include "cli/import_command.hpp"
#include "cli/pipeline_command.hpp"
#include "cli/plan_command.hpp"
#include "cli/probe_command.hpp"
#include "cli/schedule_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/train_command.hpp"
#include "cli/validate_command.hpp"
#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "core/yaml_fields.hpp"
#include "report/catalog_report.hpp"
#include "report/table.hpp"
#include "report/topo_report.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"

namespace gf::cli {

namespace {

void check_format(const std::string& format, std::initializer_list<const char*> valid) {
  for (const char* v : valid) {
    if (format == v) return;
  }
  throw InputError({}, "--format", "got '" + format + "'", join(std::vector<std::string>(valid.begin(), valid.end())));
}

std::string presets_output(const hw::Catalog& catalog, const std::string& format) {
  report::TextTable table(
      {"preset", "GPUs", "GPU", "GPU fabric", "network", "description"},
      {report::TextTable::Align::left, report::TextTable::Align::right, report::TextTable::Align::left,
       report::TextTable::Align::left, report::TextTable::Align::left, report::TextTable::Align::left});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& name : topo::preset_names()) {
    const auto spec = topo::load_preset(name, catalog);
    table.add_row({name, std::to_string(spec.node.gpus), spec.node.gpu, topo::to_string(spec.node.gpu_fabric),
                   spec.network.tech, spec.description});
    rows.push_back({{"name", name},
                    {"gpus_per_node", spec.node.gpus},
                    {"gpu", spec.node.gpu},
                    {"gpu_fabric", topo::to_string(spec.node.gpu_fabric)},
                    {"network", spec.network.tech},
                    {"p2p", spec.p2p},
                    {"description", spec.description},
                    {"source", spec.source}});
  }
  if (format == "json") return rows.dump(2) + "\n";
  return table.render();
}

std::string catalog_output(const hw::Catalog& c, const std::string& format) {
  const report::CatalogReport r = report::catalog_report(c);
  return format == "json" ? r.json.dump(2) + "\n" : r.text;
}

// The topology's notes go at the end of the report's header: its first line, the line of
// nodes and network, and the source line when the cluster has one.
std::string with_notes_text(const std::string& report, const topo::ClusterSpec& spec,
                            const std::vector<std::string>& notes) {
  if (notes.empty()) return report;
  std::size_t at = 0;
  const int header_lines = spec.source.empty() ? 2 : 3;
  for (int i = 0; i < header_lines && at != std::string::npos; ++i) {
    at = report.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at == std::string::npos) at = report.size();
  return report.substr(0, at) + notes_text(notes) + report.substr(at);
}

std::string with_notes_json(const std::string& report, const std::vector<std::string>& notes) {
  auto j = nlohmann::json::parse(report);
  j["notes"] = notes;
  return j.dump(2) + "\n";
}

// How messages name an option: its long name ("--db"), or a positional's in capitals ("CLUSTER").
std::string option_name(const CLI::Option& opt) {
  if (!opt.get_lnames().empty() || !opt.get_snames().empty()) return opt.get_name();
  std::string name = opt.get_name();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

bool is_positional(const CLI::Option& opt) { return opt.get_lnames().empty() && opt.get_snames().empty(); }

// What `sub` takes besides options, for messages: "`train` takes CLUSTER (...) and options".
std::string accepted_arguments(const CLI::App& sub) {
  std::vector<std::string> positionals;
  for (const CLI::Option* opt : sub.get_options()) {
    if (!is_positional(*opt)) continue;
    const std::string name = option_name(*opt);
    std::string what = opt->get_description();  // "CLUSTER: a preset name ..." or "all_reduce | ..."
    if (what.starts_with(name + ": ")) what = what.substr(name.size() + 2);
    positionals.push_back(name + " (" + what + ")");
  }
  const std::string name = "`" + sub.get_name() + "`";
  if (positionals.empty()) return name + " takes options only, no positional arguments";
  return name + " takes " + join(positionals, " and ") + ", then options (see `gpufabric " + sub.get_name() +
         " --help`)";
}

// Arguments CLI11 could not place (the subcommands allow extras so that they reach here): a word
// beyond the command's positionals, or an option it does not have. And a CLUSTER beside
// --preset/--cluster, which CLI11 would report as "cluster excludes --preset", as if the
// user had meant to give CLUSTER.
void refuse_extra_arguments(const CLI::App& sub) {
  const std::vector<std::string> extras = sub.remaining();
  if (!extras.empty()) {
    const std::string& first = extras.front();
    if (first.size() > 1 && first.front() == '-') {
      std::vector<std::string> names;
      for (const CLI::Option* opt : sub.get_options())
        if (!opt->get_lnames().empty()) names.push_back("--" + opt->get_lnames().front());
      const std::string hint = suggest(first, names);
      throw InputError(
          {}, first,
          "not an option of `" + sub.get_name() + "`" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
          "see `gpufabric " + sub.get_name() + " --help`");
    }
    throw InputError({}, "", "stray argument '" + first + "'", accepted_arguments(sub));
  }
  const CLI::Option* cluster = sub.get_option_no_throw("cluster");
  if (cluster == nullptr || cluster->count() == 0) return;
  for (const char* flag : {"--preset", "--cluster"}) {
    const CLI::Option* named = sub.get_option_no_throw(flag);
    if (named != nullptr && named->count() > 0) {
      throw InputError({}, "",
                       "stray argument '" + cluster->results().front() + "': " + flag + " " + named->results().front() +
                           " already names the cluster",
                       "one cluster: CLUSTER, --preset NAME or --cluster FILE");
    }
  }
}

// An option given an empty value ("--db ''", "--nodes ''") would read as its default, since every
// command takes "empty" to mean "not given": --db '' even made a throwaway database. Refused here,
// once, for every option of every subcommand; leaving the option out is how to get its default.
void refuse_empty_values(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    // Not given, a flag, or an option whose value may be left out (serve --offline [N]).
    if (opt->count() == 0 || opt->get_expected_min() == 0) continue;
    for (const auto& value : opt->results()) {
      if (!value.empty()) continue;
      throw InputError({}, option_name(*opt), "given an empty value",
                       is_positional(*opt) ? "a non-empty " + option_name(*opt)
                                           : "a value, or leave " + option_name(*opt) + " out for its default");
    }
  }
}

}  // namespace

std::string execute(const std::vector<std::string>& args, std::ostream& err) {
  std::vector<const char*> argv_storage{"gpufabric"};
  for (const auto& a : args) argv_storage.push_back(a.c_str());
  const int argc = static_cast<int>(argv_storage.size());
  const char* const* argv = argv_storage.data();
  CLI::App app{"gpufabric: model, measure and plan GPU servers and clusters along the whole data path"};
  std::string result;
  app.require_subcommand(1);

  auto* presets = app.add_subcommand("presets", "List the built-in cluster presets");
  std::string presets_format = "table";
  presets->add_option("--format", presets_format, "table | json");

  auto* catalog_cmd = app.add_subcommand("catalog", "List the hardware catalog with each entry's source");
  std::string catalog_format = "table";
  std::string catalog_dir;
  catalog_cmd->add_option("--format", catalog_format, "table | json");
  add_catalog_option(*catalog_cmd, catalog_dir);

  auto* topo_cmd = app.add_subcommand("topo", "Show a cluster's topology: connection matrix, paths, bandwidth");
  ClusterOptions topo_opts;
  topo_opts.add_to(*topo_cmd);
  std::string topo_format = "table";
  bool topo_dot = false;
  topo_cmd->add_option("--format", topo_format, "table | json");
  topo_cmd->add_flag("--dot", topo_dot, "Print the device graph in Graphviz DOT instead");

  auto* collective_cmd =
      app.add_subcommand("collective", "Predict an NCCL collective across sizes, as nccl-tests prints it");
  CollectiveOptions collective_opts;
  collective_opts.add_to(*collective_cmd);

  auto* pipeline_cmd = app.add_subcommand(
      "pipeline", "Model a node's input pipeline (storage, CPU decode, H2D, GPU) and find its bottleneck");
  PipelineOptions pipeline_opts;
  pipeline_opts.add_to(*pipeline_cmd);

  auto* train_cmd = app.add_subcommand(
      "train", "Model one training step: time, throughput, MFU, where the time goes, memory, scaling");
  TrainOptions train_opts;
  train_opts.add_to(*train_cmd);

  auto* serve_cmd = app.add_subcommand(
      "serve", "Model LLM inference serving: throughput, TTFT/TPOT percentiles, the bound; size a fleet for SLOs");
  ServeOptions serve_opts;
  serve_opts.add_to(*serve_cmd);
  auto* plan_cmd = app.add_subcommand(
      "plan",
      "Choose the architecture: search designs and layouts for a plan's workloads and limits, and recommend one");
  PlanOptions plan_opts;
  plan_opts.add_to(*plan_cmd);

  auto* schedule_cmd = app.add_subcommand(
      "schedule",
      "Place jobs on a shared cluster: replay a trace under placement policies (MIG, sharing, gangs, topology, "
      "FGD, Tiresias), FGD's fill experiment, MIG packing, elastic serving");
  ScheduleOptions schedule_opts;
  schedule_opts.add_to(*schedule_cmd);

  auto* probe_cmd = app.add_subcommand(
      "probe", "Measure this machine: memory, storage, CPU decode, GPU copies, NCCL; across nodes with --mpi");
  ProbeOptions probe_opts;
  probe_opts.add_to(*probe_cmd);

  auto* calibrate_cmd = app.add_subcommand(
      "calibrate",
      "Fit link and transport efficiencies to your own nccl-tests, nvbandwidth and probe measurements; write a "
      "calibration overlay");
  CalibrateOptions calibrate_opts;
  calibrate_opts.add_to(*calibrate_cmd);

  auto* validate_cmd = app.add_subcommand("validate", "Compare predictions with the cited public measurements");
  ValidateOptions validate_opts;
  validate_opts.add_to(*validate_cmd);

  add_import_command(app, result, err);  // runs itself when parsed: its output goes to `result`

  if (argc > 1 && argv[1][0] != '-') {
    const std::string sub = argv[1];
    std::vector<std::string> names;
    for (const auto* s : app.get_subcommands({})) names.push_back(s->get_name());
    if (std::find(names.begin(), names.end(), sub) == names.end()) {
      const std::string hint = suggest(sub, names);
      throw InputError({}, "",
                       "unknown subcommand '" + sub + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                       join(names));
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) sub->allow_extras();  // refused after parsing, saying what each takes
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return app.help();
  } catch (const CLI::CallForAllHelp&) {
    return app.help("", CLI::AppFormatMode::All);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.help();
    throw;
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    refuse_extra_arguments(*sub);
    refuse_empty_values(*sub);
  }
  if (presets->parsed()) {
    check_format(presets_format, {"table", "json"});
    result = presets_output(hw::Catalog::builtin(), presets_format);
  } else if (catalog_cmd->parsed()) {
    check_format(catalog_format, {"table", "json"});
    result = catalog_output(load_catalog(catalog_dir), catalog_format);
  } else if (collective_cmd->parsed()) {
    result = collective_opts.run();
  } else if (calibrate_cmd->parsed()) {
    result = calibrate_opts.run();
  } else if (pipeline_cmd->parsed()) {
    result = pipeline_opts.run();
  } else if (train_cmd->parsed()) {
    result = train_opts.run();
  } else if (serve_cmd->parsed()) {
    result = serve_opts.run();
  } else if (plan_cmd->parsed()) {
    result = plan_opts.run();
  } else if (schedule_cmd->parsed()) {
    result = schedule_opts.run();
  } else if (probe_cmd->parsed()) {
    result = probe_opts.run();
  } else if (validate_cmd->parsed()) {
    result = validate_opts.run();
  } else if (topo_cmd->parsed()) {
    check_format(topo_format, {"table", "json"});
    const hw::Catalog catalog = topo_opts.load_catalog();
    const topo::Topology topology(topo_opts.load_spec(catalog), catalog);
    // The transports NCCL would pick between these GPUs and nodes, as NCCL_DEBUG=INFO names them.
    const auto transports = comm::Communicator(topology, 0).transport_summary();
    if (topo_dot) {
      result = report::topo_dot(topology);
    } else if (topo_format == "json") {
      auto j = nlohmann::json::parse(with_notes_json(report::topo_json(topology), topology.notes()));
      j["nccl_transports"] = transports;
      result = j.dump(2) + "\n";
    } else {
      result = with_notes_text(report::topo_text(topology), topology.spec(), topology.notes());
      result +=
          "\nNCCL transports (as NCCL_DEBUG=INFO names them; NCCL_P2P_LEVEL and NCCL_NET_GDR_LEVEL at "
          "their defaults):\n";
      for (const auto& line : transports) result += "  " + line + "\n";
    }
  }
  return result;
}

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    // Names from users' files (jobs, nodes, clusters, models) reach the tables; the reports escape
    // them where they print them, and this escapes whatever they missed, so no raw ESC or invalid
    // UTF-8 from an input file reaches the terminal (JSON is escaped already and passes unchanged).
    out << printable(execute(args, err), true);
    out.flush();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "gpufabric: error: " << e.what() << "\n";
    err << "Run 'gpufabric --help' for usage.\n";
    return kExitBadInput;
  } catch (const InputError& e) {
    err << "gpufabric: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    err << "gpufabric: error: out of memory building the model; try fewer nodes\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "gpufabric: internal error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace gf::cli
