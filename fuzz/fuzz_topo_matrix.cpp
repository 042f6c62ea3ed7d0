// `nvidia-smi topo -m` text (`import topo-m`, docs/import-format.md): read, write the cluster file,
// and load it again (the importer builds one node itself before it returns).
#include "fuzz_support.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/import/topo_matrix_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    const auto c =
        gf::topo::import::import_topo_matrix(gf::fuzz::text_of(data, size), "fuzz.txt", gf::fuzz::catalog(), {});
    (void)gf::topo::parse_cluster(c.yaml, "imported.yaml", gf::fuzz::catalog());
  });
}
