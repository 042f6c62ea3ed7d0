// Catalog files (docs/catalog-format.md) loaded over the built-in catalog, as --catalog does,
// then the cross-references checked and the catalog listed.
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    gf::hw::Catalog c = gf::fuzz::catalog();
    c.load_text(gf::fuzz::text_of(data, size), "fuzz.yaml");
    c.check_references();
  });
}
