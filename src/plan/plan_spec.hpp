#pragma once
// A plan: what a team must run (training runs, serving loads), within which limits (money,
// power, GPUs, time, racks), over which designs (node types, networks, fabrics, node counts) and
// parallel layouts. Read from YAML (docs/plan-format.md); every field is checked where it is
// read, so a typo is an error at its line, not a silently different search.
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "topo/cluster_spec.hpp"
#include "work/inference_cost.hpp"
#include "work/model_size.hpp"
#include "work/model_spec.hpp"
#include "work/moe_overlap.hpp"
#include "work/serving_summary.hpp"
#include "work/training_memory.hpp"

namespace gf::plan {

// The largest global batch the planner takes, in sequences per step. Each layout's step is
// simulated micro-batch by micro-batch, so time grows with the batch: a one-server search of
// Llama 3.1 8B (1,350 layouts, one thread) takes 2 s at 16,384 and about 4 s at 32,768; a 16M
// batch ran for minutes. 16,384 is above the largest published LLM batches (DeepSeek-V3's
// 15,360 sequences of 4,096 tokens; Llama 3 405B's 2,048 of 8,192).
inline constexpr long kMaxGlobalBatch = 16'384;

struct TrainingWorkload {
  std::string name;
  work::ModelSpec model;
  std::string model_name;
  double tokens = 0;         // tokens to train on
  long global_batch = 0;     // sequences per step
  double deadline_days = 0;  // this run's own deadline (0: none; limits.deadline_days applies too)
  work::Precision precision = work::Precision::bf16;
  SourceLocation where;
};

struct ServingWorkload {
  std::string name;
  work::ModelSpec model;
  std::string model_name;
  double rate = 0;         // requests per second, on average
  double peak_factor = 1;  // the fleet is sized for rate x peak_factor
  long isl = 1024;
  long osl = 256;
  work::SloSpec slo;
  work::WeightFormat weights = work::WeightFormat::bf16;
  work::WeightFormat kv = work::WeightFormat::bf16;
  SourceLocation where;
};

enum class Objective { cost, time };
inline constexpr EnumNames<Objective, 2> kObjectiveNames{{{Objective::cost, "cost"}, {Objective::time, "time"}}};
enum class BudgetKind { capex, tco };

struct Limits {
  double budget_usd = 0;  // 0: none
  BudgetKind budget = BudgetKind::capex;
  double tco_years = 0;  // 0: the price catalog's depreciation period
  double power_kw = 0;   // facility power (IT power x PUE), 0: none
  long max_gpus = 0;
  double deadline_days = 0;
  long racks = 0;
  SourceLocation where;
};

// Where a list of node counts came from: given, or a range.
struct DesignSpace {
  std::vector<std::string> nodes;  // presets or cluster files; empty: every preset
  SourceLocation nodes_where;
  std::vector<std::string> gpus;    // GPU models kept (empty: all)
  std::vector<long> gpus_per_node;  // empty: each node type's own; fewer than a node has: a single server's first GPUs
  std::vector<topo::GpuFabric> intra_node;
  std::vector<bool> p2p;              // empty: the node's own
  std::vector<std::string> networks;  // empty: the node's own
  std::vector<long> nics_per_node;    // empty: the node's own
  std::vector<bool> gpudirect;        // empty: the node's own
  std::vector<topo::FabricKind> fabrics;
  std::vector<double> oversubscription;
  std::vector<long> node_counts;  // for training; empty: 1, 2, 4, ... up to the GPU limit or 64 nodes
  SourceLocation where;
};

// The parallel layouts tried for each training design.
struct SearchSpace {
  std::vector<long> tp{1, 2, 4, 8};
  std::vector<long> pp;  // empty: every divisor of the layers up to 64
  std::vector<long> cp{1};
  std::vector<long> ep{1};  // MoE models: empty in the file means every divisor of the experts up to 64
  std::vector<long> vpp;    // virtual stages (interleaved 1F1B); empty: every divisor of the layers per stage up to 8
  // Expert tensor parallel on the experts' own grid (MoE parallel folding); 0 stands for "as TP",
  // Megatron's default. Only layouts with EP > 1 use it.
  std::vector<long> etp{1, 0};
  // How the MoE all-to-alls overlap compute; empty: every schedule Megatron-Core offers the layout
  // (none, shared-expert where the model has shared experts, ep-a2a where its rules allow).
  // DualPipe is DeepSeek's own framework's schedule, tried only when listed.
  std::vector<work::MoeOverlap> moe_overlap;
  std::vector<bool> tp_comm_overlap{false, true};  // Megatron's --tp-comm-overlap (TP > 1 with SP)
  std::vector<long> micro_batch{1, 2, 4};
  std::vector<work::Recompute> recompute{work::Recompute::none, work::Recompute::selective, work::Recompute::full};
  std::vector<work::Sharding> sharding{work::Sharding::none, work::Sharding::zero1};  // zero1: distributed optimizer
  bool tp_across_nodes = false;
  // Transformer Engine's userbuffers (--tp-comm-overlap) need CUDA multicast (an NVLink-SHARP
  // NVSwitch) unless UB_SKIPMC=1 sends them over CUDA IPC: only then does the planner try
  // overlap on other NVLink nodes (A100, 4-GPU NVLink meshes).
  bool tp_comm_overlap_ipc = false;
};

// Where checkpoints go: a shared file system, written by every node at once. Each node writes at
// most `per_node` (0: the catalog's parallel file system client rate, `lustre`), and the file
// system takes at most `total` in all.
struct CheckpointSettings {
  double per_node_Bps = 0;
  double total_Bps = 0;  // 0: kSharedStorageBps (plan/evaluate.cpp)
};

// Servers the team already has: a node type (a preset or a cluster file, as in design.nodes) and
// how many. Candidates of that node type reuse them and buy only the rest.
struct ExistingServers {
  std::string node;
  long count = 0;
};

struct CostSettings {
  bool cloud = false;          // price GPU-hours at cloud rates instead of owning the cluster
  YAML::Node price_overrides;  // the plan's `prices:` section, applied over the catalog
  std::string file;
};

struct PlanSpec {
  std::string name;
  std::string file;
  std::string text;  // the file as read (hashed, stored with the results)
  std::string description;
  Objective objective = Objective::cost;
  std::vector<TrainingWorkload> training;
  std::vector<ServingWorkload> serving;
  Limits limits;
  DesignSpace design;
  SearchSpace search;
  CostSettings costs;
  CheckpointSettings checkpoint;
  std::vector<ExistingServers> existing;
  // Servers of `node` the team owns already (0: none).
  [[nodiscard]] long owned(const std::string& node) const {
    for (const auto& e : existing)
      if (e.node == node) return e.count;
    return 0;
  }
};

PlanSpec parse_plan(const std::string& text, const std::string& file);
PlanSpec load_plan_file(const std::string& path);
// The built-in example plans (data/plans/*.yaml) by name, and their names.
std::vector<std::string> builtin_plan_names();
PlanSpec builtin_plan(const std::string& name);

// A stable 64-bit FNV-1a hash, as 16 hex digits (identifies a plan's text and the model's data;
// not a security boundary).
std::string fnv1a_hex(const std::string& text);

}  // namespace gf::plan
