// Probe profiles (JSON written by `probe --save`): load, render as text and JSON, and compare with
// the catalog, as `gpufabric probe --load FILE --compare` does.
#include "fuzz_support.hpp"
#include "probe/expectations.hpp"
#include "probe/probe_report.hpp"
#include "probe/profile_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    const auto p = gf::probe::profile_from_json(gf::fuzz::text_of(data, size), "fuzz.json");
    (void)gf::probe::profile_text(p);
    gf::fuzz::dump(gf::probe::profile_to_json(p));
    const auto rows = gf::probe::compare(p, gf::fuzz::catalog());
    (void)gf::probe::compare_text(rows);
    gf::fuzz::dump(gf::probe::compare_json(rows));
  });
}
