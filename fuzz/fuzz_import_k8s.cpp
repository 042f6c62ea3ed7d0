// `gpufabric import k8s-pods` and `k8s-nodes`: the same bytes read as a pod list and as a node
// list. What imports must be what `schedule --trace` and `--nodes-file` read back whole (an
// InputError there is a bug of the importer, so it aborts).
#include "fuzz_support.hpp"
#include "probe/catalog_match.hpp"
#include "sched/csv_table.hpp"
#include "sched/import/k8s_nodes.hpp"
#include "sched/import/k8s_pods_trace.hpp"
#include "sched/import/trace_writer.hpp"
#include "sched/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gf::fuzz::text_of(data, size);
  std::vector<gf::sched::Job> jobs;
  std::vector<gf::sched::Node> nodes;
  gf::fuzz::expect_clean([&] { jobs = gf::sched::import_k8s_pods(text, "fuzz.json").jobs; });
  gf::fuzz::expect_clean([&] {
    nodes = gf::sched::import_k8s_nodes(text, "fuzz.json", [](const std::string& p) {
              return gf::probe::gpu_model_for_name(p);
            }).nodes;
  });
  try {
    if (!jobs.empty() &&
        gf::sched::parse_trace(gf::sched::parse_csv(gf::sched::trace_csv(jobs), "out.csv"), false).jobs.size() !=
            jobs.size())
      std::abort();
    std::vector<std::string> skipped;
    if (!nodes.empty() &&
        gf::sched::parse_nodes(gf::sched::parse_csv(gf::sched::node_list_csv(nodes), "nodes.csv"), false, skipped)
                .size() != nodes.size())
      std::abort();
  } catch (const gf::InputError&) {
    std::abort();
  }
  return 0;
}
