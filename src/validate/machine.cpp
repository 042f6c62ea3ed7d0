#include "validate/machine.hpp"

#include "data/embedded.hpp"
#include "topo/cluster_loader.hpp"

namespace gf::validate {

topo::ClusterSpec row_machine(const std::string& row_id, const std::string& preset, const std::string& cluster,
                              const hw::Catalog& catalog) {
  if (cluster.empty()) return topo::load_preset(preset, catalog);
  const std::string path = "data/validation/clusters/" + cluster;
  for (const auto& f : data::embedded_files()) {
    if (f.path == path) return topo::parse_cluster(std::string(f.text), "builtin:" + path, catalog);
  }
  throw InputError({}, "rows[" + row_id + "].cluster", "no validation cluster file '" + cluster + "'",
                   "a file in data/validation/clusters/");
}

}  // namespace gf::validate
