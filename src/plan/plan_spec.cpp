#include "plan/plan_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <type_traits>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "work/model_library.hpp"

namespace gf::plan {
namespace {

// The recomputation and precisions the planner searches: subsets of the tables' names (the
// spelling of each comes from its enum's table).
const std::vector<std::string> kRecompute{"none", "selective", "full"};
const std::vector<std::string> kPrecision{"fp16", "bf16", "fp8"};
const std::vector<std::string> kSharding{"none", "distributed-optimizer", "zero1", "zero2", "zero3", "fsdp"};

// A scalar list item as text, or an InputError at its line.
std::string item_text(const YAML::Node& n, const std::string& file, const std::string& field) {
  if (!n.IsScalar()) throw InputError(location_of(n, file), field, "not a single value");
  return n.Scalar();
}

std::vector<YAML::Node> list_of(const Fields& f, const char* key) {
  const YAML::Node n = f.node(key);
  if (n.IsScalar()) return {n};  // one value where a list is expected: a list of one
  return as_list(n, f.file(), f.field(key));
}

// A number item of a list, within [min, max]; long for whole numbers, double otherwise.
template <typename T>
T number_item(const YAML::Node& n, const std::string& file, const std::string& field, T min, T max) {
  const std::string s = item_text(n, file, field);
  std::size_t used = 0;
  T v{};
  try {
    if constexpr (std::is_integral_v<T>) {
      v = std::stol(s, &used);
    } else {
      v = std::stod(s, &used);
    }
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || !std::isfinite(static_cast<double>(v)) || v < min || v > max) {
    throw InputError(
        location_of(n, file), field,
        fmt::format("'{}' is not a {} from {} to {}", s, std::is_integral_v<T> ? "whole number" : "number", min, max));
  }
  return v;
}

long whole(const YAML::Node& n, const std::string& file, const std::string& field, long min, long max) {
  return number_item<long>(n, file, field, min, max);
}

double real(const YAML::Node& n, const std::string& file, const std::string& field, double min, double max) {
  return number_item<double>(n, file, field, min, max);
}

bool boolean(const YAML::Node& n, const std::string& file, const std::string& field) {
  const std::string s = item_text(n, file, field);
  if (s == "true" || s == "on" || s == "yes") return true;
  if (s == "false" || s == "off" || s == "no") return false;
  throw InputError(location_of(n, file), field, fmt::format("'{}' is not true or false", s), "true, false");
}

std::string choice(const YAML::Node& n, const std::string& file, const std::string& field,
                   const std::vector<std::string>& options) {
  const std::string s = item_text(n, file, field);
  if (std::find(options.begin(), options.end(), s) == options.end()) {
    const std::string near = suggest(s, options);
    throw InputError(location_of(n, file), field,
                     fmt::format("unknown value '{}'{}", s, near.empty() ? "" : " (did you mean '" + near + "'?)"),
                     join(options));
  }
  return s;
}

// A list item named in `table` (aliases accepted), or choice()'s error listing the canonical names.
template <typename E, std::size_t N>
E choice(const YAML::Node& n, const std::string& file, const std::string& field, const EnumNames<E, N>& table) {
  if (const auto v = parse_name(table, item_text(n, file, field))) return *v;
  (void)choice(n, file, field, names(table));  // throws: the text is no name of the table
  throw std::logic_error("choice: unreachable");
}

template <typename T, typename Read>
std::vector<T> read_list(const Fields& f, const char* key, Read read) {
  std::vector<T> out;
  if (!f.has(key)) return out;
  const auto items = list_of(f, key);
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.push_back(read(items[i], fmt::format("{}[{}]", f.field(key), i)));
  }
  if (out.empty()) f.fail(key, "empty list", "at least one value, or leave the key out for the default");
  return out;
}

work::ModelSpec model_of(const Fields& f, const std::string& plan_file, std::string& name) {
  if (f.has("model") == f.has("model_file")) {
    f.fail("model", "give exactly one of model (a library name) and model_file",
           "a name from `gpufabric train --list`, or model_file: PATH");
  }
  if (f.has("model")) {
    name = f.text("model");
    try {
      return work::library_model(name, f.field("model"));
    } catch (const InputError& e) {
      throw InputError(f.where("model"), f.field("model"), e.problem(), e.valid());
    }
  }
  std::filesystem::path p = f.text("model_file");
  if (p.is_relative() && !plan_file.empty() && !plan_file.starts_with("builtin:")) {
    p = std::filesystem::path(plan_file).parent_path() / p;
  }
  name = f.text("model_file");
  return work::model_from_file(p.string());
}

TrainingWorkload parse_training(const YAML::Node& n, const std::string& file, const std::string& path) {
  const Fields f(
      n, file, path,
      {"name", "kind", "model", "model_file", "tokens", "global_batch", "seq", "precision", "deadline_days"});
  TrainingWorkload w;
  w.where = f.where();
  w.name = f.text("name");
  w.model = model_of(f, file, w.model_name);
  if (!w.model.is_transformer()) f.fail("model", "the planner plans transformer models", "a transformer model");
  w.tokens = f.positive("tokens");
  if (w.tokens < 1e3 || w.tokens > 1e16) f.fail("tokens", "outside 1e3 .. 1e16", "tokens to train on, e.g. 2e12");
  w.global_batch = f.integer("global_batch", 1, std::numeric_limits<long>::max());
  if (w.global_batch > kMaxGlobalBatch) {
    f.fail("global_batch", fmt::format("{} sequences per step is above the planner's cap", w.global_batch),
           fmt::format("a whole number of sequences from 1 to {} (the largest published LLM batches are near "
                       "15,000)",
                       kMaxGlobalBatch));
  }
  if (f.has("seq")) w.model.seq = f.integer("seq", 1, 1 << 22);
  if (f.has("deadline_days")) w.deadline_days = f.positive("deadline_days");
  w.precision = f.has("precision") ? *parse_name(work::kPrecisionNames, f.choice("precision", kPrecision))
                                   : work::Precision::bf16;
  return w;
}

ServingWorkload parse_serving(const YAML::Node& n, const std::string& file, const std::string& path) {
  const Fields f(n, file, path,
                 {"name", "kind", "model", "model_file", "rate", "peak_factor", "isl", "osl", "slo_ttft_ms",
                  "slo_tpot_ms", "slo_percentile", "precision", "kv_dtype"});
  ServingWorkload w;
  w.where = f.where();
  w.name = f.text("name");
  w.model = model_of(f, file, w.model_name);
  if (!w.model.is_transformer()) f.fail("model", "serving needs a transformer model", "a decoder model");
  w.rate = f.positive("rate");
  if (w.rate > 1e6) f.fail("rate", "above 1e6 requests/s", "requests per second on average");
  w.peak_factor = f.positive_or("peak_factor", 1.0);
  if (w.peak_factor < 1 || w.peak_factor > 100)
    f.fail("peak_factor", "outside 1 .. 100", "e.g. 3 for a peak of three times the average");
  w.isl = f.integer_or("isl", 1, 1 << 20, 1024);
  w.osl = f.integer_or("osl", 1, 1 << 20, 256);
  if (f.has("slo_ttft_ms")) w.slo.ttft_s = f.physical("slo_ttft_ms", 1e-3, physical::latency);
  if (f.has("slo_tpot_ms")) w.slo.tpot_s = f.physical("slo_tpot_ms", 1e-3, physical::latency);
  if (!w.slo.any()) f.fail("slo_ttft_ms", "a serving load needs a latency goal", "slo_ttft_ms and/or slo_tpot_ms");
  w.slo.percentile = f.has("slo_percentile") ? f.positive("slo_percentile") : 90;
  if (w.slo.percentile > 100) f.fail("slo_percentile", "above 100", "e.g. 90 or 99");
  const std::string p = f.has("precision") ? f.text("precision") : "bf16";
  if (!work::parse_weight_format(p, w.weights))
    f.fail("precision", "unknown weight format", join(names(work::kWeightFormatNames)));
  const std::string kv =
      f.has("kv_dtype") ? f.text("kv_dtype") : (w.weights == work::WeightFormat::fp8 ? "fp8" : "bf16");
  if (!work::parse_weight_format(kv, w.kv) || w.kv == work::WeightFormat::fp4 || w.kv == work::WeightFormat::int4) {
    f.fail("kv_dtype", "unknown KV cache type", "fp16, bf16, fp8");
  }
  return w;
}

std::vector<long> node_counts(const Fields& f) {
  if (!f.has("node_counts")) return {};
  const YAML::Node n = f.node("node_counts");
  if (n.IsMap()) {
    const Fields r(n, f.file(), f.field("node_counts"), {"from", "to", "step", "factor"});
    const long from = r.integer("from", 1, 100000);
    const long to = r.integer("to", 1, 100000);
    if (to < from) r.fail("to", fmt::format("{} is below from ({})", to, from), "to >= from");
    if (r.has("step") == r.has("factor")) r.fail("step", "give exactly one of step and factor", "step: N or factor: 2");
    std::vector<long> out;
    if (r.has("step")) {
      const long step = r.integer("step", 1, 100000);
      for (long v = from; v <= to; v += step) out.push_back(v);
    } else {
      const long factor = r.integer("factor", 2, 16);
      for (long v = from; v <= to; v *= factor) out.push_back(v);
    }
    if (out.size() > 4096) r.fail("to", "more than 4,096 node counts", "a coarser step");
    return out;
  }
  auto out = read_list<long>(f, "node_counts", [&](const YAML::Node& i, const std::string& field) {
    return whole(i, f.file(), field, 1, 100000);
  });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DesignSpace parse_design(const Fields& f) {
  DesignSpace d;
  d.where = f.where();
  const std::string& file = f.file();
  auto text = [&](const YAML::Node& i, const std::string& field) { return item_text(i, file, field); };
  d.nodes = read_list<std::string>(f, "nodes", text);
  if (f.has("nodes")) d.nodes_where = f.where("nodes");
  d.gpus = read_list<std::string>(f, "gpus", text);
  d.gpus_per_node = read_list<long>(
      f, "gpus_per_node", [&](const YAML::Node& i, const std::string& field) { return whole(i, file, field, 1, 64); });
  d.intra_node = read_list<topo::GpuFabric>(f, "intra_node", [&](const YAML::Node& i, const std::string& field) {
    return choice(i, file, field, topo::kGpuFabricNames);
  });
  auto flag = [&](const YAML::Node& i, const std::string& field) { return boolean(i, file, field); };
  d.p2p = read_list<bool>(f, "p2p", flag);
  d.networks = read_list<std::string>(f, "networks", text);
  d.nics_per_node = read_list<long>(
      f, "nics_per_node", [&](const YAML::Node& i, const std::string& field) { return whole(i, file, field, 1, 64); });
  d.gpudirect = read_list<bool>(f, "gpudirect", flag);
  d.fabrics = read_list<topo::FabricKind>(f, "fabrics", [&](const YAML::Node& i, const std::string& field) {
    return choice(i, file, field, topo::kFabricKindNames);
  });
  d.oversubscription = read_list<double>(f, "oversubscription", [&](const YAML::Node& i, const std::string& field) {
    return real(i, file, field, 1, 64);
  });
  d.node_counts = node_counts(f);
  return d;
}

SearchSpace parse_search(const Fields& f, SearchSpace s) {
  const std::string& file = f.file();
  auto pos = [&](long max) {
    return [&file, max](const YAML::Node& i, const std::string& field) { return whole(i, file, field, 1, max); };
  };
  if (f.has("tp")) s.tp = read_list<long>(f, "tp", pos(1024));
  if (f.has("pp")) s.pp = read_list<long>(f, "pp", pos(1024));
  if (f.has("cp")) s.cp = read_list<long>(f, "cp", pos(1024));
  if (f.has("ep")) s.ep = read_list<long>(f, "ep", pos(1024));
  if (f.has("vpp")) s.vpp = read_list<long>(f, "vpp", pos(64));
  if (f.has("etp")) {
    // A size, or "tp" for Megatron's default (the experts split as the dense layers are).
    s.etp = read_list<long>(f, "etp", [&](const YAML::Node& i, const std::string& field) {
      if (i.IsScalar() && i.Scalar() == "tp") return 0L;
      if (i.IsScalar() && !i.Scalar().empty() && std::isdigit(static_cast<unsigned char>(i.Scalar().front())) == 0)
        throw InputError(location_of(i, file), field, fmt::format("'{}' is neither a size nor tp", i.Scalar()),
                         "a whole number from 1 to 1024, or tp (as TP, Megatron's default)");
      return whole(i, file, field, 1, 1024);
    });
  }
  if (f.has("moe_overlap")) {
    s.moe_overlap = read_list<work::MoeOverlap>(f, "moe_overlap", [&](const YAML::Node& i, const std::string& field) {
      return choice(i, file, field, work::kMoeOverlapNames);
    });
  }
  if (f.has("tp_comm_overlap")) {
    s.tp_comm_overlap = read_list<bool>(
        f, "tp_comm_overlap", [&](const YAML::Node& i, const std::string& field) { return boolean(i, file, field); });
  }
  if (f.has("micro_batch")) s.micro_batch = read_list<long>(f, "micro_batch", pos(4096));
  if (f.has("recompute")) {
    s.recompute = read_list<work::Recompute>(f, "recompute", [&](const YAML::Node& i, const std::string& field) {
      return *parse_name(work::kRecomputeNames, choice(i, file, field, kRecompute));
    });
  }
  if (f.has("sharding")) {
    s.sharding = read_list<work::Sharding>(f, "sharding", [&](const YAML::Node& i, const std::string& field) {
      const std::string v = choice(i, file, field, kSharding);
      if (v == "none") return work::Sharding::none;
      if (v == "zero2") return work::Sharding::zero2;
      if (v == "zero3") return work::Sharding::zero3;
      if (v == "fsdp") return work::Sharding::fsdp_full;
      return work::Sharding::zero1;
    });
  }
  s.tp_across_nodes = f.flag_or("tp_across_nodes", false);
  s.tp_comm_overlap_ipc = f.flag_or("tp_comm_overlap_ipc", false);
  return s;
}

}  // namespace

PlanSpec parse_plan(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  if (!root.IsMap()) throw InputError({file, 1, 1}, "plan", "not a mapping", "a plan file (docs/plan-format.md)");
  const Fields f(root, file, "",
                 {"name", "description", "objective", "workloads", "limits", "design", "search", "prices", "cloud",
                  "checkpoint", "existing"});
  PlanSpec p;
  p.file = file;
  p.text = text;
  p.name = f.text("name");
  p.description = f.text_or("description", "");
  if (f.has("objective")) p.objective = f.choice("objective", kObjectiveNames);
  const auto workloads = as_list(f.node("workloads"), file, "workloads");
  if (workloads.empty()) f.fail("workloads", "empty", "at least one training or serving workload");
  std::vector<std::string> names;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const std::string path = fmt::format("workloads[{}]", i);
    if (!workloads[i].IsMap()) throw InputError(location_of(workloads[i], file), path, "not a mapping");
    const YAML::Node kind = workloads[i]["kind"];
    if (!kind) throw InputError(location_of(workloads[i], file), path + ".kind", "missing", "training, serving");
    const std::string kv = choice(kind, file, path + ".kind", {"training", "serving"});
    std::string name;
    if (kv == "training") {
      p.training.push_back(parse_training(workloads[i], file, path));
      name = p.training.back().name;
    } else {
      p.serving.push_back(parse_serving(workloads[i], file, path));
      name = p.serving.back().name;
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw InputError(location_of(workloads[i], file), path + ".name", "'" + name + "' names two workloads",
                       "a different name for each workload");
    }
    names.push_back(name);
  }
  if (f.has("limits")) {
    const Fields l(f.node("limits"), file, "limits",
                   {"budget_usd", "budget", "tco_years", "power_kw", "max_gpus", "deadline_days", "racks"});
    p.limits.where = l.where();
    if (l.has("budget_usd")) p.limits.budget_usd = l.positive("budget_usd");
    if (l.has("budget"))
      p.limits.budget = l.choice("budget", {"capex", "tco"}) == "tco" ? BudgetKind::tco : BudgetKind::capex;
    if (l.has("tco_years")) {
      p.limits.tco_years = l.positive("tco_years");
      if (p.limits.tco_years > 30) l.fail("tco_years", "above 30 years", "e.g. 5");
    }
    if (l.has("budget") && !l.has("budget_usd"))
      l.fail("budget", "a budget kind without budget_usd", "budget_usd: AMOUNT");
    if (l.has("power_kw")) p.limits.power_kw = l.positive("power_kw");
    if (l.has("max_gpus")) p.limits.max_gpus = l.integer("max_gpus", 1, 100000);
    if (l.has("deadline_days")) p.limits.deadline_days = l.positive("deadline_days");
    if (l.has("racks")) p.limits.racks = l.integer("racks", 1, 100000);
  }
  if (f.has("design")) {
    const Fields d(f.node("design"), file, "design",
                   {"nodes", "gpus", "gpus_per_node", "intra_node", "p2p", "networks", "nics_per_node", "gpudirect",
                    "fabrics", "oversubscription", "node_counts"});
    p.design = parse_design(d);
    if (p.limits.max_gpus > 0 && !p.design.node_counts.empty() && !p.design.gpus_per_node.empty()) {
      const long smallest = p.design.node_counts.front() *
                            *std::min_element(p.design.gpus_per_node.begin(), p.design.gpus_per_node.end());
      if (smallest > p.limits.max_gpus) {
        d.fail("node_counts",
               fmt::format("contradicts limits.max_gpus: the smallest design has {} GPUs, the limit is {}", smallest,
                           p.limits.max_gpus),
               "node counts whose GPUs fit under limits.max_gpus");
      }
    }
  }
  if (f.has("search")) {
    const Fields s(f.node("search"), file, "search",
                   {"tp", "pp", "cp", "ep", "etp", "vpp", "moe_overlap", "tp_comm_overlap", "micro_batch", "recompute",
                    "sharding", "tp_across_nodes", "tp_comm_overlap_ipc"});
    p.search = parse_search(s, p.search);
  }
  if (f.has("existing")) {
    const auto items = as_list(f.node("existing"), file, "existing");
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Fields e(items[i], file, fmt::format("existing[{}]", i), {"node", "count"});
      p.existing.push_back({e.text("node"), e.integer("count", 1, 100000)});
      if (!p.design.nodes.empty() &&
          std::find(p.design.nodes.begin(), p.design.nodes.end(), p.existing.back().node) == p.design.nodes.end()) {
        e.fail("node", "'" + p.existing.back().node + "' is not in design.nodes", join(p.design.nodes));
      }
    }
  }
  if (f.has("checkpoint")) {
    const Fields c(f.node("checkpoint"), file, "checkpoint", {"per_node_GBps", "total_GBps"});
    if (c.has("per_node_GBps")) p.checkpoint.per_node_Bps = c.physical("per_node_GBps", 1e9, physical::bandwidth);
    if (c.has("total_GBps")) p.checkpoint.total_Bps = c.physical("total_GBps", 1e9, physical::bandwidth);
  }
  if (f.has("prices")) p.costs.price_overrides = f.node("prices");
  p.costs.file = file;
  p.costs.cloud = f.flag_or("cloud", false);
  if (p.limits.budget == BudgetKind::tco && p.costs.cloud) {
    f.fail("cloud", "contradicts limits.budget: tco (a cloud run has no capital to own)",
           "budget: capex, or cloud: false");
  }
  return p;
}

PlanSpec load_plan_file(const std::string& path) { return parse_plan(read_text_file(path, "PLAN"), path); }

std::vector<std::string> builtin_plan_names() {
  std::vector<std::string> out;
  for (const auto& f : data::files_under("data/plans/", ".yaml")) {
    std::string name(f.path.substr(11));
    out.push_back(name.substr(0, name.size() - 5));
  }
  return out;
}

PlanSpec builtin_plan(const std::string& name) {
  const std::string path = "data/plans/" + name + ".yaml";
  if (const auto text = data::find(path)) return parse_plan(std::string(*text), "builtin:" + path);
  throw InputError({}, "PLAN", "no built-in plan '" + name + "'", join(builtin_plan_names()));
}

std::string fnv1a_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace gf::plan
