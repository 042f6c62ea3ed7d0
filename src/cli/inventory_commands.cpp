#include "cli/inventory_commands.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cluster_options.hpp"
#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "report/catalog_report.hpp"
#include "report/table.hpp"
#include "report/topo_report.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"

namespace gf::cli {

void check_format(const std::string& format, std::initializer_list<const char*> valid) {
  for (const char* v : valid) {
    if (format == v) return;
  }
  throw InputError({}, "--format", "got '" + format + "'", join(std::vector<std::string>(valid.begin(), valid.end())));
}

namespace {

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

}  // namespace

SubcommandRun add_presets_command(CLI::App& app, std::ostream& /*err*/) {
  auto format = std::make_shared<std::string>("table");
  app.add_option("--format", *format, "table | json");
  return [format] {
    check_format(*format, {"table", "json"});
    return presets_output(hw::Catalog::builtin(), *format);
  };
}

SubcommandRun add_catalog_command(CLI::App& app, std::ostream& /*err*/) {
  struct Options {
    std::string format = "table";
    std::string dir;
  };
  auto o = std::make_shared<Options>();
  app.add_option("--format", o->format, "table | json");
  add_catalog_option(app, o->dir);
  return [o] {
    check_format(o->format, {"table", "json"});
    return catalog_output(load_catalog(o->dir), o->format);
  };
}

SubcommandRun add_topo_command(CLI::App& app, std::ostream& /*err*/) {
  struct Options {
    ClusterOptions cluster;
    std::string format = "table";
    bool dot = false;
  };
  auto o = std::make_shared<Options>();
  o->cluster.add_to(app);
  app.add_option("--format", o->format, "table | json");
  app.add_flag("--dot", o->dot, "Print the device graph in Graphviz DOT instead");
  return [o] {
    check_format(o->format, {"table", "json"});
    const hw::Catalog catalog = o->cluster.load_catalog();
    const topo::Topology topology(o->cluster.load_spec(catalog), catalog);
    // The transports NCCL would pick between these GPUs and nodes, as NCCL_DEBUG=INFO names them.
    const auto transports = comm::Communicator(topology, 0).transport_summary();
    if (o->dot) return report::topo_dot(topology);
    if (o->format == "json") {
      auto j = nlohmann::json::parse(with_notes_json(report::topo_json(topology), topology.notes()));
      j["nccl_transports"] = transports;
      return j.dump(2) + "\n";
    }
    std::string result = with_notes_text(report::topo_text(topology), topology.spec(), topology.notes());
    result +=
        "\nNCCL transports (as NCCL_DEBUG=INFO names them; NCCL_P2P_LEVEL and NCCL_NET_GDR_LEVEL at "
        "their defaults):\n";
    for (const auto& line : transports) result += "  " + line + "\n";
    return result;
  };
}

}  // namespace gf::cli
