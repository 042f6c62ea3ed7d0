// Path validation suites (data/validation/topo_paths.yaml format): parse, predict every row and
// render the table and JSON, as `gpufabric validate --suite paths --file FILE` does.
#include "fuzz_support.hpp"
#include "report/validation_report.hpp"
#include "validate/path_validation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    const auto rows = gf::validate::parse_path_rows(gf::fuzz::text_of(data, size), "fuzz.yaml");
    if (rows.size() > 8) return;  // each row builds a server's topology: keep executions fast
    const auto results = gf::validate::predict(rows, gf::fuzz::catalog());
    (void)gf::report::validation_text(results);
    (void)gf::report::validation_json(results);
    (void)gf::report::validation_csv(results);
  });
}
