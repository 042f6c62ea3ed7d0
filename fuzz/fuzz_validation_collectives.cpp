// Collective validation suites (data/validation/collectives*.yaml format): parse, predict rows of
// affordable size with the collective model and render them, as `gpufabric validate --suite
// collectives --file FILE` does.
#include "fuzz_support.hpp"
#include "report/validation_report.hpp"
#include "validate/collective_validation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    const auto rows = gf::validate::parse_collective_rows(gf::fuzz::text_of(data, size), "fuzz.yaml");
    if (rows.size() > 4) return;
    for (const auto& r : rows) {
      if (r.nodes > 4 || r.gpus > 64) return;  // the reader is under test; large clusters only cost time
    }
    const auto checks = gf::validate::check_collectives(rows, gf::fuzz::catalog());
    (void)gf::report::collectives_text(checks);
    (void)gf::report::collectives_json(checks);
    (void)gf::report::collectives_csv(checks);
  });
}
