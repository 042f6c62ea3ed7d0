// Scheduler inputs (README, "Job traces"): the same bytes read as a job trace (PAI 2023 or
// gpufabric's CSV) and as a node list, strictly and with --skip-bad; what parses is replayed on a
// small cluster (the first 16 nodes, the first 64 jobs) under first fit and FGD, and the
// simulator's books must balance.
#include "fuzz_support.hpp"
#include "sched/simulator.hpp"
#include "sched/trace_reader.hpp"

namespace {

std::vector<gf::sched::Node> small_cluster() {
  std::vector<gf::sched::Node> out;
  for (int i = 0; i < 4; ++i) {
    gf::sched::Node n;
    n.name = "n" + std::to_string(i);
    n.model = i % 2 ? "a100-sxm4-80gb" : "G2";
    n.mig_table = gf::sched::mig_table(n.model);
    n.cpu_milli = 96000;
    n.memory_mib = 786432;
    n.gpus.resize(8);
    n.leaf = i / 2;
    out.push_back(n);
  }
  return out;
}

void replay(const std::vector<gf::sched::Job>& all, const std::vector<gf::sched::Node>& nodes) {
  std::vector<gf::sched::Job> jobs(all.begin(), all.begin() + std::min<std::size_t>(all.size(), 64));
  const gf::sched::ClusterState c(nodes);
  for (const char* name : {"first-fit", "fgd", "tiresias"}) {
    const auto r = gf::sched::simulate(c, jobs, *gf::sched::make_policy(name));
    const auto& m = r.metrics;
    if (m.completed + m.cancelled + m.unschedulable != static_cast<long>(jobs.size())) std::abort();
    if (m.allocation < 0 || m.allocation > 1 + 1e-9) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gf::fuzz::text_of(data, size);
  gf::fuzz::expect_clean([&] {
    const auto t = gf::sched::parse_trace(gf::sched::parse_csv(text, "fuzz.csv"), true);
    if (t.jobs.empty()) std::abort();  // parse_trace promises at least one job
    if (t.timed) replay(t.jobs, small_cluster());
  });
  return gf::fuzz::expect_clean([&] {
    std::vector<std::string> skipped;
    auto nodes = gf::sched::parse_nodes(gf::sched::parse_csv(text, "fuzz.csv"), true, skipped);
    if (nodes.empty()) std::abort();
    nodes.resize(std::min<std::size_t>(nodes.size(), 16));
    gf::sched::Job j;
    j.name = "one";
    j.duration = 10;
    j.pod.gpus = 1;
    replay({j}, nodes);
  });
}
