#pragma once
// Runs a plan: enumerates the designs and the units of work, evaluates what the results store
// does not hold yet on every core (and, under MPI, across ranks), stores each result as it
// completes, and returns every candidate in a fixed order (the same answer however the work was
// split).
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "hw/catalog.hpp"
#include "plan/design_space.hpp"
#include "plan/plan_spec.hpp"
#include "plan/price_catalog.hpp"

namespace gf::plan {

struct PlannerOptions {
  int threads = 0;   // 0: every core
  std::string db;    // results database; empty: none (nothing is resumed)
  bool mpi = false;  // split the units across MPI ranks (gpufabric built with MPI)
  // Called after each unit completes (from the thread that finished it, serialised).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct PlanRun {
  DesignSet designs;
  std::vector<nlohmann::json> candidates;  // in unit order
  std::size_t units = 0;
  std::size_t evaluated = 0;  // in this run
  std::size_t resumed = 0;    // read back from the store
  std::size_t replaced = 0;   // stored rows that failed their checksum, evaluated again and replaced
  bool root = true;           // false on MPI ranks other than 0 (they print nothing)
  int ranks = 1;
};

// The model's version: gpufabric's version and a hash of every data file compiled in (catalog,
// presets, prices, efficiencies, models). Results from another version are not mixed with these.
std::string model_version();

// What a results store holds, read without evaluating anything (`plan --db FILE --show`): the
// plan stored in it, its candidates in unit order (null where the store lacks one: a search
// stopped part way, or a row that failed its checksum), and how many are missing.
struct StoredRun {
  PlanSpec plan;
  DesignSet designs;
  std::vector<nlohmann::json> candidates;
  std::string model_version;  // the version that wrote the store
  std::size_t units = 0;      // candidates the plan has
  std::size_t missing = 0;    // of those, not in the store (rejected ones included)
  std::size_t rejected = 0;   // rows that failed their checksum or did not parse
};
StoredRun read_stored_run(const std::string& db, const hw::Catalog& catalog);

// `prices`: the catalog's; the plan's own `prices:` are applied over them here.
PlanRun run_plan(const PlanSpec& plan, const hw::Catalog& catalog, const PriceCatalog& prices,
                 const PlannerOptions& options);

}  // namespace gf::plan
