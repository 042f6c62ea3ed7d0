#include "validate/time_to_train_validation.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "plan/plan_spec.hpp"
#include "plan/planner.hpp"
#include "plan/price_catalog.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "work/model_library.hpp"

namespace gf::validate {

std::vector<TimeToTrainRow> parse_time_to_train_rows(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields top(root, file, "", {"rows"});
  std::vector<TimeToTrainRow> out;
  const auto items = as_list(top.node("rows"), file, "rows");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Fields f(items[i], file, fmt::format("rows[{}]", i),
                   {"id", "model", "tokens", "global_batch_tokens", "seq", "preset", "gpus", "gpus_assumed", "layout",
                    "measured_gpu_hours", "measured_days", "source", "note"});
    TimeToTrainRow r;
    r.where = f.where();
    r.id = f.text("id");
    r.model = f.text("model");
    r.tokens = f.positive("tokens");
    r.global_batch_tokens = f.positive("global_batch_tokens");
    r.seq = f.integer("seq", 1, 1 << 22);
    // The row runs through the planner, which takes at most plan::kMaxGlobalBatch sequences per
    // step (each is simulated); a larger batch is refused here, naming the row's field.
    const double sequences = std::round(r.global_batch_tokens / static_cast<double>(r.seq));
    if (sequences > static_cast<double>(plan::kMaxGlobalBatch)) {
      f.fail("global_batch_tokens",
             fmt::format("{:g} tokens are {:g} sequences of {} per step, above the planner's cap of {}",
                         r.global_batch_tokens, sequences, r.seq, plan::kMaxGlobalBatch),
             fmt::format("at most {} x seq tokens per step", plan::kMaxGlobalBatch));
    }
    if (r.tokens < 1e3 || r.tokens > 1e16) f.fail("tokens", "outside 1e3 .. 1e16", "tokens trained on, e.g. 2e12");
    r.preset = f.text("preset");
    r.gpus = f.integer("gpus", 1, topo::kMaxGpus);
    r.gpus_assumed = f.flag_or("gpus_assumed", false);
    if (f.has("layout")) {
      const Fields l(f.node("layout"), file, f.field("layout"), {"tp", "pp", "cp", "vpp"});
      r.tp = l.integer_or("tp", 1, 1024, 0);
      r.pp = l.integer_or("pp", 1, 1024, 0);
      r.cp = l.integer_or("cp", 1, 1024, 0);
      r.vpp = l.integer_or("vpp", 1, 64, 0);
    }
    if (f.has("measured_gpu_hours") == f.has("measured_days")) {
      f.fail("measured_gpu_hours", "give exactly one of measured_gpu_hours and measured_days");
    }
    if (f.has("measured_gpu_hours")) r.measured_gpu_hours = f.positive("measured_gpu_hours");
    if (f.has("measured_days")) r.measured_days = f.positive("measured_days");
    r.source = f.text("source");
    r.note = f.text_or("note", "");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<TimeToTrainRow> builtin_time_to_train_rows() {
  if (const auto text = data::find("data/validation/time_to_train.yaml"))
    return parse_time_to_train_rows(std::string(*text), "builtin:data/validation/time_to_train.yaml");
  return {};
}

std::vector<TimeToTrainCheck> check_time_to_train(const std::vector<TimeToTrainRow>& rows, const hw::Catalog& catalog) {
  std::vector<TimeToTrainCheck> out;
  const plan::PriceCatalog prices = plan::builtin_prices();
  for (const auto& row : rows) {
    TimeToTrainCheck c;
    c.row = row;
    try {
      const auto spec = topo::load_preset(row.preset, catalog);
      const long per_node = spec.node.gpus;
      if (row.gpus % per_node != 0) {
        c.skipped = fmt::format("{} GPUs are not whole {}-GPU servers", row.gpus, per_node);
        out.push_back(c);
        continue;
      }
      plan::PlanSpec p;
      p.name = row.id;
      p.file = row.where.file;
      p.objective = plan::Objective::time;
      plan::TrainingWorkload w;
      w.name = row.id;
      w.model = work::library_model(row.model, "model");
      w.model_name = row.model;
      w.model.seq = row.seq;
      w.tokens = row.tokens;
      w.global_batch = std::max<long>(1, std::lround(row.global_batch_tokens / static_cast<double>(row.seq)));
      p.training.push_back(w);
      p.design.nodes = {row.preset};
      p.design.node_counts = {row.gpus / per_node};
      if (row.tp > 0) p.search.tp = {row.tp};
      if (row.pp > 0) p.search.pp = {row.pp};
      if (row.cp > 0) p.search.cp = {row.cp};
      if (row.vpp > 0) p.search.vpp = {row.vpp};
      p.search.micro_batch = {1, 2, 4, 8};
      p.text = row.id;
      const auto run = plan::run_plan(p, catalog, prices, {});
      if (run.candidates.empty() || run.candidates.front().is_null()) {
        c.skipped = "no candidate";
        out.push_back(c);
        continue;
      }
      const auto& r = run.candidates.front();
      if (!r.contains("time_days")) {
        c.skipped = r.value("why_not", std::string("no layout"));
        out.push_back(c);
        continue;
      }
      c.predicted_days = r["time_days"].get<double>();
      c.predicted_gpu_hours = c.predicted_days * 24 * static_cast<double>(row.gpus);
      c.measured_gpu_hours =
          row.measured_gpu_hours > 0 ? row.measured_gpu_hours : row.measured_days * 24 * static_cast<double>(row.gpus);
      c.error = c.predicted_gpu_hours / c.measured_gpu_hours - 1;
      c.mfu = r.value("mfu", 0.0);
      c.goodput = r.value("goodput", 1.0);
      c.layout = r.value("layout", std::string());
    } catch (const InputError& e) {
      c.skipped = e.problem();
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace gf::validate
