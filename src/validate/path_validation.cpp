#include "validate/path_validation.hpp"

#include <cmath>
#include <map>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "validate/machine.hpp"

namespace gf::validate {

std::vector<PathRow> parse_path_rows(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields top(root, file, "", {"rows"});
  std::vector<PathRow> rows;
  std::size_t i = 0;
  for (const auto& item : as_list(top.node("rows"), file, "rows")) {
    const Fields f(item, file, "rows[" + std::to_string(i++) + "]",
                   {"id", "preset", "cluster", "p2p", "path", "src", "dst", "socket", "measured_GBps", "tool",
                    "machine", "calibration", "source", "note"});
    PathRow r;
    r.origin = RowOrigin::of(item, file, "rows[" + std::to_string(i - 1) + "]");
    r.id = f.text("id");
    if (f.has("preset") == f.has("cluster")) {
      f.fail("preset", "give exactly one of preset and cluster", "preset: NAME or cluster: FILE");
    }
    r.preset = f.text_or("preset", "");
    r.cluster = f.text_or("cluster", "");
    r.p2p = f.flag_or("p2p", true);
    r.path = f.choice("path", {"gpu-gpu", "h2d", "d2h"});
    r.src = static_cast<int>(f.integer("src", 0, 71));
    if (r.path == "gpu-gpu") {
      r.dst = static_cast<int>(f.integer("dst", 0, 71));
      // A copy from a GPU to itself is no path: its "error" would be infinite.
      if (r.dst == r.src) f.fail("dst", "the same GPU as src", "a GPU other than src " + std::to_string(r.src));
    }
    if (r.path != "gpu-gpu") r.remote_socket = f.choice("socket", {"local", "remote"}) == "remote";
    r.measured_GBps = f.physical("measured_GBps", 1e9, physical::bandwidth) / 1e9;
    r.tool = f.text("tool");
    r.machine = f.text_or("machine", "");
    r.calibration = f.flag_or("calibration", false);
    r.source = f.text("source");
    r.note = f.text_or("note", "");
    rows.push_back(r);
  }
  return rows;
}

std::vector<PathRow> builtin_path_rows() {
  if (const auto text = data::find("data/validation/topo_paths.yaml"))
    return parse_path_rows(std::string(*text), "builtin:data/validation/topo_paths.yaml");
  return {};
}

std::vector<PathResult> predict(const std::vector<PathRow>& rows, const hw::Catalog& catalog) {
  std::vector<PathResult> out;
  std::map<std::string, topo::Topology> built;
  for (const auto& row : rows) {
    const std::string key = row.preset + row.cluster + (row.p2p ? "" : "/nop2p");
    auto it = built.find(key);
    if (it == built.end()) {
      it = at_row(row.origin, [&] {
        auto spec = row_machine(row.origin, row.preset, row.cluster, catalog);
        topo::ClusterOverrides o;
        o.p2p = row.p2p;
        topo::apply_overrides(spec, o, catalog);
        return built.emplace(key, topo::Topology(spec, catalog)).first;
      });
    }
    const topo::Topology& t = it->second;
    for (const auto& [name, gpu] : {std::pair{"src", row.src}, std::pair{"dst", row.dst}}) {
      if (gpu >= t.gpus_per_node() && (std::string(name) == "src" || row.path == "gpu-gpu")) {
        throw row.origin.error(name,
                               "GPU " + std::to_string(gpu) + " is beyond the " + std::to_string(t.gpus_per_node()) +
                                   " GPUs of '" + row.preset + row.cluster + "'",
                               "0.." + std::to_string(t.gpus_per_node() - 1));
      }
    }
    topo::Route r;
    if (row.path == "gpu-gpu") {
      r = t.route_gpus(row.src, row.dst);
    } else {
      const int own = t.node().socket_of(t.node().gpu(row.src));
      const int socket = row.remote_socket ? (own + 1) % t.node().sockets() : own;
      r = row.path == "h2d" ? t.route_memory_to_gpu(socket, row.src) : t.route_gpu_to_memory(row.src, socket);
    }
    PathResult res;
    res.row = row;
    res.route_type = r.label();
    res.transport = topo::to_string(r.transport);
    res.predicted_GBps = in_GBps(r.bandwidth);
    res.error = (res.predicted_GBps - row.measured_GBps) / row.measured_GBps;
    out.push_back(res);
  }
  return out;
}

std::vector<GroupError> group_errors(const std::vector<PathResult>& results) {
  std::map<std::string, std::pair<std::size_t, double>> acc;
  for (const auto& r : results) {
    const std::string kind = r.row.calibration ? "calibration" : "independent";
    for (const std::string& g : {r.row.path + " " + kind, "all " + kind}) {
      auto& a = acc[g];
      ++a.first;
      a.second += std::fabs(r.error);
    }
  }
  std::vector<GroupError> out;
  for (const auto& [g, a] : acc) out.push_back({g, a.first, a.second / static_cast<double>(a.first)});
  return out;
}

}  // namespace gf::validate
