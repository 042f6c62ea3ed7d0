// Plan files (docs/plan-format.md) and the price catalog's format, read from the same bytes:
// what parses is carried as far as the planner's enumeration of designs and units (evaluating
// them would take the fuzzer's whole budget), and a plan's `prices:` section is applied.
#include "fuzz_support.hpp"
#include "plan/design_space.hpp"
#include "plan/evaluate.hpp"
#include "plan/plan_spec.hpp"
#include "plan/price_catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gf::fuzz::text_of(data, size);
  static const gf::hw::Catalog catalog = gf::hw::Catalog::builtin();
  gf::fuzz::expect_clean([&] { (void)gf::plan::parse_prices(text, "fuzz.yaml"); });
  return gf::fuzz::expect_clean([&] {
    const auto plan = gf::plan::parse_plan(text, "fuzz.yaml");
    auto prices = gf::plan::builtin_prices();
    gf::plan::apply_price_overrides(prices, plan.costs.price_overrides, plan.file);
    const auto designs = gf::plan::enumerate_designs(plan, catalog);
    const auto units = gf::plan::enumerate_units(plan, designs);
    for (const auto& u : units)
      if (u.key.empty()) std::abort();
  });
}
