// Cluster description files (docs/cluster-format.md): parse, then, for sizes a test can afford,
// build the topology and render `topo` as text and JSON.
#include "fuzz_support.hpp"
#include "report/topo_report.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    const auto spec = gf::topo::parse_cluster(gf::fuzz::text_of(data, size), "fuzz.yaml", gf::fuzz::catalog());
    if (spec.nodes > 16) return;  // the reader is under test; large graphs only cost time
    const gf::topo::Topology t(spec, gf::fuzz::catalog());
    (void)gf::report::topo_text(t);
    (void)gf::report::topo_json(t);
  });
}
