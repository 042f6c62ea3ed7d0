#pragma once
// One unit of the planner's work and its evaluation: a training workload on a design at a node
// count (every layout searched, the fastest kept), or a serving workload on a design (the fleet
// sized for its peak). The result is a JSON record (the candidate): what the results store keeps,
// what `--show`, the recommendation and the report read back.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "plan/design_space.hpp"
#include "plan/plan_spec.hpp"
#include "plan/price_catalog.hpp"

namespace gf::plan {

struct Unit {
  std::string key;  // stable: workload, design key, node count
  bool serving = false;
  std::size_t workload = 0;  // index into the plan's training or serving list
  std::size_t design = 0;
  long nodes = 0;  // training; serving sizes its own
};

// Training units: each design at each node count (a single server only for designs that use
// part of one); serving units: each design once. Node counts beyond the GPU limit are left out.
std::vector<Unit> enumerate_units(const PlanSpec& plan, const DesignSet& designs);

// The default node counts of a training design when the plan gives none: 1, 2, 4, ... while the
// GPUs stay within limits.max_gpus (or 512 GPUs).
std::vector<long> default_node_counts(const PlanSpec& plan, long gpus_per_node);

struct PlanInputs {
  const PlanSpec& plan;
  const DesignSet& designs;
  const hw::Catalog& catalog;
  const PriceCatalog& prices;
};

nlohmann::json evaluate_unit(const PlanInputs& in, const Unit& u);

}  // namespace gf::plan
