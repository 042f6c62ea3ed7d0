#include "validate/error_classes.hpp"

#include "comm/collective_sweep.hpp"

#include "work/model_size.hpp"

namespace gf::validate {

band::CollectivePath collective_path(const topo::Topology& t, long nodes) { return comm::band_path(t, nodes); }

std::vector<std::string> training_classes(const std::string& gpu_name, const work::ModelSpec& m) {
  return band::training_classes(gpu_name, work::count_parameters(m).total / 1e9, m.moe.has_value());
}

}  // namespace gf::validate
