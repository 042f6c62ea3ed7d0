// Input-workload files (docs/workload-format.md): parse, then model the input pipeline on one
// DGX A100 node and render it, as `gpufabric pipeline --input FILE` does.
#include "fuzz_support.hpp"
#include "report/pipeline_report.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "work/input_workload.hpp"
#include "work/pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gf::topo::Topology node(gf::topo::load_preset("dgx-a100", gf::fuzz::catalog()), gf::fuzz::catalog());
  return gf::fuzz::expect_clean([&] {
    const auto w = gf::work::parse_workload(gf::fuzz::text_of(data, size), "fuzz.yaml");
    gf::report::PipelineReport rep;
    rep.cluster = "dgx-a100";
    rep.workload = w.name;
    rep.result = gf::work::model_pipeline(node, gf::fuzz::catalog(), w, rep.options);
    (void)gf::report::pipeline_table(rep);
    (void)gf::report::pipeline_json(rep);
  });
}
