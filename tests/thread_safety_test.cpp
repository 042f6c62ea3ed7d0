// What several threads share, used by several threads at once: the planner's workers, the MIG
// profile table, a communicator's cache. Built a second time under ThreadSanitizer
// (gpufabric_thread_tests, `make test-tsan`), where a data race fails the test; here it checks
// that the answers do not depend on the threads and that a worker's failure is an error, not
// std::terminate (issue 34, item 2).
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/model.hpp"
#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "plan/plan_spec.hpp"
#include "plan/planner.hpp"
#include "plan/price_catalog.hpp"
#include "plan/recommend.hpp"
#include "probe/decode.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "work/mig_profile.hpp"

namespace gf {
namespace {

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::builtin();
  return c;
}

// Runs `body(thread_index)` on `n` threads started together, and joins them.
template <typename F>
void on_threads(int n, F body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < n; ++t) {
    pool.emplace_back([&, t] {
      ++ready;
      while (ready.load() < n) std::this_thread::yield();  // start together, to overlap
      body(t);
    });
  }
  for (auto& th : pool) th.join();
}

std::string answer_of(const plan::PlanSpec& p, int threads) {
  static const plan::PriceCatalog prices = plan::builtin_prices();
  plan::PlannerOptions o;
  o.threads = threads;
  const auto run = plan::run_plan(p, catalog(), prices, o);
  return plan::analyse(p, run.candidates, run.designs.skipped, run.designs.designs.size(), plan::model_version())
      .dump();
}

// A serving plan on DGX H100 weighs MIG slices against whole GPUs, so the workers look MIG
// profiles up at the same time (the table was a shared YAML::Node, which yaml-cpp does not make
// safe to read from several threads).
TEST(ThreadSafety, AServingPlanOnFourThreadsGivesOneThreadsAnswer) {
  const auto p = plan::builtin_plan("case4-serving-peak");
  EXPECT_EQ(answer_of(p, 4), answer_of(p, 1));
}

TEST(ThreadSafety, MigProfilesLookedUpByManyThreadsAtOnce) {
  const std::vector<std::string> gpus = {"a100-sxm4-40gb", "a100-sxm4-80gb", "h100-sxm5", "h200-sxm"};
  constexpr int kThreads = 8;
  std::vector<std::vector<std::string>> seen(kThreads);
  on_threads(kThreads, [&](int t) {
    for (const auto& g : gpus) {
      const auto& spec = catalog().gpu(g);
      for (const auto& name : work::mig_profile_names(spec)) {
        const auto m = work::mig_profile(spec, name);
        seen[static_cast<std::size_t>(t)].push_back(g + "/" + m.name + "/" + std::to_string(m.max_instances));
      }
    }
  });
  ASSERT_FALSE(seen[0].empty());
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[static_cast<std::size_t>(t)], seen[0]);
}

// One communicator's cache of per-byte times, filled by several threads asking at once (the
// planner's layouts share a communicator per group); every thread gets the one-thread answer.
TEST(ThreadSafety, OneCommunicatorPredictedFromManyThreads) {
  auto spec = topo::load_preset("dgx-h100", catalog());
  topo::ClusterOverrides o;
  o.nodes = 4;
  topo::apply_overrides(spec, o, catalog());
  const topo::Topology t(spec, catalog());
  const std::vector<double> sizes = {8e3, 1e6, 64e6, 1e9};
  std::vector<double> expected;
  {
    const comm::Communicator alone(t, 0);
    for (double s : sizes) {
      comm::CollectiveRequest r;
      r.size = s;
      expected.push_back(comm::predict(alone, r).time.value());
    }
  }
  const comm::Communicator shared(t, 0);
  constexpr int kThreads = 4;
  std::vector<std::vector<double>> got(kThreads);
  on_threads(kThreads, [&](int th) {
    for (double s : sizes) {
      comm::CollectiveRequest r;
      r.size = s;
      got[static_cast<std::size_t>(th)].push_back(comm::predict(shared, r).time.value());
    }
  });
  for (const auto& g : got) EXPECT_EQ(g, expected);
}

// A worker whose bookkeeping throws (the store busy or full, the progress bar's terminal gone)
// ends the search with that error on the calling thread; before, the exception left the worker
// thread and std::terminate ended the process.
TEST(ThreadSafety, AWorkerThatFailsEndsThePlanWithItsError) {
  const auto p = plan::builtin_plan("case6-gigabit");
  static const plan::PriceCatalog prices = plan::builtin_prices();
  plan::PlannerOptions o;
  o.threads = 2;
  std::atomic<int> calls{0};
  o.progress = [&](std::size_t, std::size_t) {
    if (++calls == 3) throw InputError({}, "--db", "database is locked", "a database no other process writes");
  };
  try {
    plan::run_plan(p, catalog(), prices, o);
    ADD_FAILURE() << "expected the worker's error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("database is locked"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.load(), 3);  // the other workers stopped at the first failure
}

// The CPU decode probe runs JPEG decoding and zlib on every core at once, each thread on its own
// buffers, with the first error kept under a lock.
TEST(ThreadSafety, TheDecodeProbeOnFourThreads) {
  probe::DecodeOptions o;
  o.threads = 4;
  o.duration = seconds(0.02);
  const auto d = probe::measure_decode(o);
  EXPECT_GT(d.jpeg_all_cores.value(), 0);
  EXPECT_GT(d.inflate_per_core.value(), 0);
}

}  // namespace
}  // namespace gf
