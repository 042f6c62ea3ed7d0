#include "cli/plan_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/cluster_options.hpp"
#include "cli/output_files.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "plan/plan_spec.hpp"
#include "plan/planner.hpp"
#include "plan/price_catalog.hpp"
#include "plan/recommend.hpp"
#include "plan/results_store.hpp"
#include "report/plan_report.hpp"
#include "report/schedule_report.hpp"

namespace gf::cli {
namespace {

plan::PlanSpec load(const std::string& name) {
  if (name.empty()) return plan::builtin_plan(kDefaultPlan);
  const auto names = plan::builtin_plan_names();
  if (std::find(names.begin(), names.end(), name) != names.end() && !std::filesystem::exists(name)) {
    return plan::builtin_plan(name);
  }
  std::error_code ec;
  if (!std::filesystem::exists(name, ec) && name.find('/') == std::string::npos && !name.ends_with(".yaml")) {
    const std::string near = suggest(name, names);
    throw InputError({}, "PLAN",
                     "'" + name + "' is neither a built-in plan nor a file" +
                         (near.empty() ? "" : " (did you mean '" + near + "'?)"),
                     "a plan file, or one of: " + join(names));
  }
  return plan::load_plan_file(name);
}

}  // namespace

void PlanOptions::add_to(CLI::App& app) {
  app.add_option(
      "plan", plan,
      std::string("PLAN: a plan file (docs/plan-format.md) or a built-in plan (--list); default ") + kDefaultPlan);
  app.add_option("--db", db, "Results database (SQLite): every candidate is stored; a rerun resumes");
  app.add_flag("--show", show, "Print what --db holds, without evaluating anything");
  app.add_flag("--list", list, "List the built-in plans");
  app.add_flag("--mpi", mpi, "Split the candidates across MPI ranks (run under mpirun or srun)");
  app.add_flag("--quiet", quiet, "No progress bar");
  app.add_option("--format", format, "table | json | csv");
  app.add_option("--report", report, "Write a self-contained HTML report to this file");
  app.add_option("--threads", threads, "Threads, 1 or more (default: every core)");
  app.add_option("--timeline", timeline,
                 "With --report: a timeline CSV from `gpufabric schedule --timeline`, drawn in the report");
  app.add_option("--rows", rows, "Rows of the ranked table per workload (default 12)");
  add_catalog_option(app, catalog_dir);
}

std::string PlanOptions::run() const {
  if (format != "table" && format != "json" && format != "csv") {
    throw InputError({}, "--format", "got '" + format + "'", "table, json, csv");
  }
  const long n_threads = threads.empty() ? 0 : parse_whole("--threads", threads, 1, 1024);  // 0: every core
  const long n_rows = parse_whole("--rows", rows, 1, 1000000);
  if (list) {
    std::string out = "Built-in plans (gpufabric plan NAME):\n";
    for (const auto& n : plan::builtin_plan_names()) {
      const auto p = plan::builtin_plan(n);
      out += fmt::format("  {:<28} {}\n", n, p.description);
    }
    return out;
  }
  if (!timeline.empty() && report.empty())
    throw InputError({}, "--timeline", "given without --report", "--report FILE.html --timeline FILE.csv");
  // No output may replace an input: the plan, the timeline, or (with --show) the database read.
  std::vector<NamedPath> inputs{{"PLAN", plan}, {"--timeline", timeline}};
  std::vector<NamedPath> outputs{{"--report", report}};
  (show ? inputs : outputs).push_back({"--db", db});
  refuse_same_file(inputs, outputs);
  if (!timeline.empty()) (void)report::read_timeline_csv(timeline);  // a bad file fails before the search
  if (!report.empty()) {
    // Fail before the search, not after it: the report's place must be writable.
    check_writable(report, "--report");
  }
  const hw::Catalog catalog = load_catalog(catalog_dir);
  plan::PlanSpec spec;
  std::vector<nlohmann::json> candidates;
  std::vector<std::string> skipped;
  std::size_t designs = 0;
  std::string version = plan::model_version();
  plan::SearchState state;
  if (show) {
    if (db.empty())
      throw InputError({}, "--show", "needs --db FILE", "--db FILE written by an earlier `gpufabric plan`");
    if (!plan.empty()) throw InputError({}, "--show", "reads the plan stored in --db", "leave PLAN out with --show");
    std::error_code ec;
    if (!std::filesystem::exists(db, ec))
      throw InputError({}, "--db", "no such file '" + db + "'", "a file written by `gpufabric plan --db`");
    if (!std::filesystem::is_regular_file(db, ec))
      throw InputError({}, "--db", "'" + db + "' is not a regular file", "a file written by `gpufabric plan --db`");
    // Read-only: the units the plan has, what the store holds of them, and what it lacks.
    plan::StoredRun stored = plan::read_stored_run(db, catalog);
    spec = std::move(stored.plan);
    version = stored.model_version;
    candidates = std::move(stored.candidates);
    skipped = stored.designs.skipped;
    designs = stored.designs.designs.size();
    state = {stored.units, stored.missing, stored.rejected, 0};
  } else {
    spec = load(plan);
    const plan::PriceCatalog prices = plan::builtin_prices();
    plan::PlannerOptions po;
    po.threads = static_cast<int>(n_threads);
    po.db = db;
    po.mpi = mpi;
    ProgressBar bar(!quiet && stderr_is_terminal(), "candidates");
    po.progress = [&bar](std::size_t done, std::size_t total) { bar.update(done, total); };
    const plan::PlanRun run = plan::run_plan(spec, catalog, prices, po);
    if (!run.root) return {};
    candidates = run.candidates;
    skipped = run.designs.skipped;
    designs = run.designs.designs.size();
    state = {run.units, 0, 0, run.replaced};
  }
  const nlohmann::json answer = plan::analyse(spec, candidates, skipped, designs, version, state);
  if (!report.empty()) {
    const std::string extra =
        timeline.empty() ? std::string() : report::timeline_charts_html(report::read_timeline_csv(timeline), 0);
    write_whole(report, report::plan_report_html(answer, extra), "--report");
  }
  if (format == "json") return answer.dump(2) + "\n";
  if (format == "csv") return plan::plan_csv(answer);
  std::string out = plan::plan_text(answer, static_cast<std::size_t>(n_rows));
  if (!report.empty()) out += "\nreport: " + report + "\n";
  return out;
}

}  // namespace gf::cli
