#include "plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "data/files.hpp"
#include "plan/evaluate.hpp"
#include "plan/mpi_split.hpp"
#include "plan/results_store.hpp"

#ifndef GPUFABRIC_VERSION
#define GPUFABRIC_VERSION "0"
#endif

namespace gf::plan {

std::string model_version() {
  static const std::string v = [] {
    std::string all;
    for (const auto& f : data::files_under("")) {
      if (f.path.starts_with("data/plans/") || f.path.starts_with("data/validation/")) continue;
      all += f.path;
      all += '\0';
      all += f.text;
    }
    return fmt::format("gpufabric {} data {}", GPUFABRIC_VERSION, fnv1a_hex(all));
  }();
  return v;
}

PlanRun run_plan(const PlanSpec& plan, const hw::Catalog& catalog, const PriceCatalog& catalog_prices,
                 const PlannerOptions& options) {
  PlanRun run;
  PriceCatalog prices = catalog_prices;
  apply_price_overrides(prices, plan.costs.price_overrides, plan.file);
  run.designs = enumerate_designs(plan, catalog);
  const std::vector<Unit> units = enumerate_units(plan, run.designs);
  run.units = units.size();
  const MpiWorld world = mpi_world(options.mpi);
  run.root = world.rank == 0;
  run.ranks = world.size;

  std::unique_ptr<ResultsStore> store;
  std::vector<char> have(units.size(), 0);
  std::vector<nlohmann::json> results(units.size());
  if (run.root && !options.db.empty()) {
    store = std::make_unique<ResultsStore>(options.db, fnv1a_hex(plan.text), model_version(), plan.name, plan.text);
    const auto stored = store->all();
    run.replaced = store->rejected();  // left out of `stored`, so evaluated again below
    for (std::size_t i = 0; i < units.size(); ++i) {
      const auto it = stored.find(units[i].key);
      if (it == stored.end()) continue;
      try {
        results[i] = nlohmann::json::parse(it->second);
        have[i] = 1;
        ++run.resumed;
      } catch (const nlohmann::json::exception&) {
        // A row that does not parse is evaluated again (and replaced).
      }
    }
  }
  mpi_broadcast(world, have);

  // This rank's share of what is missing: every size-th missing unit.
  std::vector<std::size_t> mine;
  std::size_t missing = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (have[i]) continue;
    if (static_cast<int>(missing % static_cast<std::size_t>(world.size)) == world.rank) mine.push_back(i);
    ++missing;
  }
  const PlanInputs in{plan, run.designs, catalog, prices};
  unsigned threads = options.threads > 0 ? static_cast<unsigned>(options.threads) : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(1, mine.size()))));
  std::atomic<std::size_t> next{0};
  std::mutex done_mutex;
  std::size_t done = run.resumed;
  std::exception_ptr failure;
  // Everything a worker does can throw: the model on a bad input, the store when the database is
  // busy or the disk full, the progress callback. An exception that left a std::thread would end
  // the process with std::terminate, so each is caught, the first kept (under the lock, so no
  // worker stores or reports anything after it) and the others stopped; it is rethrown on this
  // thread after the join, where the CLI turns it into one message.
  auto keep_first_failure = [&] {  // called with done_mutex held
    if (!failure) failure = std::current_exception();
    next = mine.size();
  };
  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= mine.size()) return;
      const std::size_t i = mine[k];
      nlohmann::json r;
      try {
        r = evaluate_unit(in, units[i]);
      } catch (...) {
        const std::lock_guard lock(done_mutex);
        keep_first_failure();
        return;
      }
      const std::lock_guard lock(done_mutex);
      if (failure) return;
      try {
        if (store) store->put(units[i].key, r.dump());
        results[i] = std::move(r);
        ++done;
        if (options.progress) options.progress(done, units.size());
      } catch (...) {
        keep_first_failure();
        return;
      }
    }
  };
  if (threads == 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  run.evaluated = mine.size();

  // Under MPI, rank 0 gathers every rank's results, stores them and answers.
  if (world.size > 1) {
    nlohmann::json part = nlohmann::json::array();
    for (std::size_t i : mine) part.push_back({i, results[i]});
    const auto parts = mpi_gather(world, part.dump());
    if (run.root) {
      run.evaluated = 0;
      for (const auto& text : parts) {
        for (const auto& item : nlohmann::json::parse(text)) {
          const auto i = item[0].get<std::size_t>();
          if (have[i]) continue;
          results[i] = item[1];
          if (store) store->put(units[i].key, results[i].dump());
          ++run.evaluated;
        }
      }
    }
  }
  if (run.root) run.candidates = std::move(results);
  return run;
}

StoredRun read_stored_run(const std::string& db, const hw::Catalog& catalog) {
  StoredRun out;
  const auto store = ResultsStore::open_existing(db);
  out.plan = parse_plan(store->plan_text(), "(stored in " + db + ")");
  out.model_version = store->model_version();
  // The units the plan has, enumerated as the run that wrote the store did, so that the ones it
  // lacks are counted rather than silently absent from the answer.
  out.designs = enumerate_designs(out.plan, catalog);
  const std::vector<Unit> units = enumerate_units(out.plan, out.designs);
  out.units = units.size();
  const auto stored = store->all();
  out.rejected = store->rejected();
  out.candidates.resize(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    const auto it = stored.find(units[i].key);
    if (it != stored.end()) {
      // A row with a good checksum parses (it was written from JSON); kept as a check anyway.
      try {
        out.candidates[i] = nlohmann::json::parse(it->second);
        continue;
      } catch (const nlohmann::json::exception&) {
        ++out.rejected;
      }
    }
    ++out.missing;
  }
  return out;
}

}  // namespace gf::plan
