#include "validate/machine.hpp"

#include <algorithm>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "topo/cluster_loader.hpp"

namespace gf::validate {

RowOrigin RowOrigin::of(const YAML::Node& row, const std::string& file, std::string path) {
  RowOrigin o;
  o.where = location_of(row, file);
  o.path = std::move(path);
  for (const auto& kv : row) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.as<std::string>();
    o.keys[key] = location_of(kv.second, file);
    if (key == "id" && kv.second.IsScalar()) o.id = kv.second.as<std::string>();
  }
  return o;
}

InputError RowOrigin::error(const std::string& key, const std::string& problem, const std::string& valid) const {
  const auto it = keys.find(key);
  return {it != keys.end() ? it->second : where, path + "." + key, problem, valid};
}

InputError RowOrigin::blame(const InputError& e) const {
  const std::string label = path + (id.empty() ? "" : " (" + id + ")");
  if (e.where().file == where.file) return e;  // already names this file (this row's own checks)
  if (!e.where().file.empty()) {
    // Inside a file the row names (a cluster file): keep that place, and say which row led there.
    return {e.where(), e.field(),
            e.problem() + "; in validation " + label + " at " + where.file + ":" + std::to_string(where.line),
            e.valid()};
  }
  std::string key = e.field();
  key.erase(0, key.find_first_not_of('-'));
  std::replace(key.begin(), key.end(), '-', '_');
  if (!key.empty() && keys.count(key) > 0) return error(key, e.problem(), e.valid());
  // An option the row does not give (the fabric it implies, say): the row as a whole.
  return {where, label, (key.empty() ? "" : key + ": ") + e.problem(), e.valid()};
}

topo::ClusterSpec row_machine(const RowOrigin& row, const std::string& preset, const std::string& cluster,
                              const hw::Catalog& catalog) {
  return at_row(row, [&] {
    if (cluster.empty()) return topo::load_preset(preset, catalog);
    const std::string path = "data/validation/clusters/" + cluster;
    if (const auto text = data::find(path)) return topo::parse_cluster(std::string(*text), "builtin:" + path, catalog);
    throw row.error("cluster", "no validation cluster file '" + cluster + "'", "a file in data/validation/clusters/");
  });
}

std::string row_choice(const YAML::Node& row, const std::string& file, const char* key, const std::string& fallback,
                       const std::vector<std::string>& valid) {
  const YAML::Node n = row[key];
  if (!n || n.IsNull()) return fallback;
  const std::string v = n.IsScalar() ? n.Scalar() : std::string();
  if (std::find(valid.begin(), valid.end(), v) == valid.end()) {
    const std::string near = suggest(v, valid);
    throw InputError(location_of(n, file), key,
                     (n.IsScalar() ? "unknown value '" + v + "'" : std::string("not a single value")) +
                         (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                     join(valid));
  }
  return v;
}

}  // namespace gf::validate
