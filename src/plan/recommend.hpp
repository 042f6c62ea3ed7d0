#pragma once
// From evaluated candidates to an answer: the feasible ones ranked by the plan's objective, the
// Pareto frontier (time against cost for training, cost against latency for serving), scaling
// curves per design, and a recommendation that explains itself in the model's own numbers: the
// alternatives it beat and by how much, scale-up against scale-out at the same GPU count, what a
// 10-point efficiency loss would cost, and how interruptions and checkpoints stretch the run.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "plan/planner.hpp"

namespace gf::plan {

// How complete the candidates handed to analyse() are. A run evaluates (or reads back) every
// unit; `--show` reads a store that a search killed part way may have left short, and then the
// answer is provisional and must say so everywhere it is read (text, JSON, CSV, HTML).
struct SearchState {
  std::size_t units = 0;     // candidates the plan has (0: unknown, the candidates given)
  std::size_t missing = 0;   // of those, absent (not evaluated yet, or a row that failed its check)
  std::size_t rejected = 0;  // stored rows that failed their checksum (--show: among the missing)
  std::size_t replaced = 0;  // stored rows that failed their checksum and were evaluated again
};

// The whole answer as JSON (the schema `plan --format json` prints and the HTML report reads).
// Its "search" object says whether the search is complete; when it is not, every headline is
// marked provisional. Throws InputError, at the plan's limits (or workloads), when a workload has
// no feasible candidate: which limit excluded most, and the closest candidate.
nlohmann::json analyse(const PlanSpec& plan, const std::vector<nlohmann::json>& candidates,
                       const std::vector<std::string>& skipped, std::size_t designs, const std::string& model_version,
                       const SearchState& state = {});

// The answer as text: the recommendation and its reasons, the Pareto frontier and the ranked
// table of each workload.
std::string plan_text(const nlohmann::json& answer, std::size_t rows = 12);
// Every candidate, one row each.
std::string plan_csv(const nlohmann::json& answer);

}  // namespace gf::plan
