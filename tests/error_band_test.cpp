// Error bands and leave-one-source-out validation (issue 35): the arithmetic of a band, the
// rule that a calibration source leaves the held-out set whole, the class keys, the table's
// bad input, and that each command's headline carries its band.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "band/band_class.hpp"
#include "band/error_band.hpp"
#include "core/error.hpp"
#include "test_support.hpp"
#include "validate/generalisation.hpp"

namespace gf {
namespace {

validate::ScoredRow row(std::string source, std::string cls, double ratio, bool calibration = false) {
  validate::ScoredRow r;
  r.id = fmt::format("{}-{}", source, ratio);
  r.source = std::move(source);
  r.classes = {std::move(cls), "broad"};
  r.ratio = ratio;
  r.error = 1.0 / ratio - 1.0;
  r.calibration = calibration;
  return r;
}

TEST(ErrorBand, PercentilesOfHeldOutRowsAndUnvalidatedBelowTheMinimum) {
  std::vector<validate::ScoredRow> rows;
  // Ten rows of class "a": measured / predicted 0.80, 0.85, ..., 1.25.
  for (int i = 0; i < 10; ++i) rows.push_back(row(fmt::format("s{}", i), "a", 0.80 + 0.05 * i));
  // Seven of class "b": below the minimum.
  for (int i = 0; i < 7; ++i) rows.push_back(row(fmt::format("t{}", i), "b", 1.0));
  const auto bands = validate::compute_bands("training", rows);
  const auto find = [&](const std::string& c) {
    for (const auto& b : bands)
      if (b.cls == c) return b;
    ADD_FAILURE() << "no band " << c;
    return band::Band{};
  };
  const auto a = find("a");
  EXPECT_EQ(a.rows, 10);
  ASSERT_TRUE(a.validated());
  // Every row its own source: the offsets are the rows, the scatter about them nothing, so the
  // 2.5th and 97.5th percentiles of the hundred sums fall on the ends, each widened about the
  // offsets' mean by the prediction factor sqrt((k + 1) / (k - 1)) for k = 10 sources.
  double centre = 0;
  for (int i = 0; i < 10; ++i) centre += std::log(0.80 + 0.05 * i) / 10;
  const double widen = std::sqrt(11.0 / 9.0);
  EXPECT_NEAR(a.ratio_low, std::exp(centre + (std::log(0.80) - centre) * widen), 1e-9);
  EXPECT_NEAR(a.ratio_high, std::exp(centre + (std::log(1.25) - centre) * widen), 1e-9);
  EXPECT_LT(a.ratio_low, 0.80);
  EXPECT_GT(a.ratio_high, 1.25);
  EXPECT_FALSE(find("b").validated());
  EXPECT_EQ(find("broad").rows, 17);
}

TEST(ErrorBand, ANewSourceCarriesHowSourcesDifferAndOneSourceIsNotEnough) {
  std::vector<validate::ScoredRow> rows;
  // Three sources, each tight about its own offset (0.8, 1.0, 1.25): the band spans the offsets,
  // widened about their mean (1.0 in logs) by sqrt((3 + 1) / (3 - 1)): three sources say little
  // of where a fourth will fall.
  for (int i = 0; i < 4; ++i) {
    rows.push_back(row("low", "a", 0.8));
    rows.push_back(row("mid", "a", 1.0));
    rows.push_back(row("high", "a", 1.25));
  }
  // One source of twelve rows: no band, however many rows.
  for (int i = 0; i < 12; ++i) rows.push_back(row("only", "b", 1.0 + 0.01 * i));
  const auto bands = validate::compute_bands("training", rows);
  for (const auto& b : bands) {
    if (b.cls == "a") {
      EXPECT_EQ(b.sources, 3);
      ASSERT_TRUE(b.validated());
      EXPECT_NEAR(b.ratio_low, std::pow(0.8, std::sqrt(2.0)), 1e-9);
      EXPECT_NEAR(b.ratio_high, std::pow(1.25, std::sqrt(2.0)), 1e-9);
    }
    if (b.cls == "b") {
      EXPECT_EQ(b.rows, 12);
      EXPECT_FALSE(b.validated());
      EXPECT_EQ(band::describe(b, band::Direction::same), "(unvalidated: 12 rows from 1 source like this: b)");
    }
  }
}

// Rows scatter about their source's mean further than their deviations from it show: two rows
// at +-0.1 (in logs) about a mean of their own come from a spread of sqrt(2) x 0.1.
TEST(ErrorBand, ScatterAboutASourcesOwnMeanIsWidenedForTheMeanItUsedUp) {
  std::vector<validate::ScoredRow> rows;
  for (const double offset : {-0.2, 0.0, 0.2}) {
    const std::string source = fmt::format("s{}", offset);
    for (int i = 0; i < 3; ++i) {
      rows.push_back(row(source, "a", std::exp(offset - 0.1)));
      rows.push_back(row(source, "a", std::exp(offset + 0.1)));
    }
  }
  const auto bands = validate::compute_bands("training", rows);
  ASSERT_FALSE(bands.empty());
  const auto& b = bands.front();
  ASSERT_EQ(b.cls, "a");
  ASSERT_TRUE(b.validated());
  // Offsets +-0.2 widened by sqrt((3 + 1) / (3 - 1)); the six rows' scatter by sqrt(6 / 5).
  const double top = 0.2 * std::sqrt(2.0) + 0.1 * std::sqrt(6.0 / 5.0);
  EXPECT_NEAR(b.ratio_high, std::exp(top), 1e-9);
  EXPECT_NEAR(b.ratio_low, std::exp(-top), 1e-9);
}

TEST(ErrorBand, ACalibrationSourceLeavesTheHeldOutSetWhole) {
  std::vector<validate::ScoredRow> rows;
  rows.push_back(row("cal", "a", 1.0, true));
  rows.push_back(row("cal", "a", 0.5));  // a sibling of the calibration row: same machine, same harness
  rows.push_back(row("free", "a", 0.8));
  const auto g = validate::generalise("training", rows);
  EXPECT_EQ(g.rows, 3);
  EXPECT_EQ(g.held_out_rows, 1);
  EXPECT_EQ(g.calibration_rows, 2);
  ASSERT_EQ(g.calibration_sources.size(), 1u);
  EXPECT_EQ(g.calibration_sources.front(), "cal");
  EXPECT_NEAR(g.held_out_mape, 0.25, 1e-9);  // 1/0.8 - 1
  for (const auto& b : validate::compute_bands("training", rows)) EXPECT_EQ(b.rows, 1) << b.cls;
}

TEST(ErrorBand, AReciprocalQuantityTurnsTheIntervalRoundAndTheTextSaysSo) {
  band::Band b;
  b.cls = "H100-SXM5 dense 3-30B";
  b.rows = 38;
  b.sources = 5;
  b.ratio_low = 0.8;   // measured throughput as low as 80% of the prediction
  b.ratio_high = 1.1;  // and as high as 110%
  const auto same = band::interval(b, 100.0, band::Direction::same);
  EXPECT_NEAR(same.low, 80.0, 1e-9);
  EXPECT_NEAR(same.high, 110.0, 1e-9);
  const auto inv = band::interval(b, 10.0, band::Direction::inverse);  // a step time
  EXPECT_NEAR(inv.low, 10.0 / 1.1, 1e-9);
  EXPECT_NEAR(inv.high, 12.5, 1e-9);
  EXPECT_EQ(band::describe(b, band::Direction::inverse), "(-9% .. +25%; 38 rows like this: H100-SXM5 dense 3-30B)");
  EXPECT_EQ(band::describe_short(b, band::Direction::same), "-20%..+10% (38)");
  b.rows = 3;
  EXPECT_EQ(band::describe(b, band::Direction::same), "(unvalidated: 3 rows like this: H100-SXM5 dense 3-30B)");
}

TEST(ErrorBand, ClassesKeepThePartAndFormFactorAndTheSizeBand) {
  EXPECT_EQ(band::gpu_family("a100-sxm4-80gb"), "A100-SXM4");
  EXPECT_EQ(band::gpu_family("a100-sxm4-40gb"), "A100-SXM4");
  EXPECT_EQ(band::gpu_family("h100-sxm5-96gb-500w"), "H100-SXM5");
  EXPECT_EQ(band::gpu_family("h100-pcie"), "H100-PCIE");
  EXPECT_EQ(band::gpu_family("rtx-4090"), "RTX-4090");
  const auto t = band::training_classes("h100-sxm5", 8.0, false);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], "H100-SXM5 dense 3-30B");
  EXPECT_EQ(t[1], "H100-SXM5 dense");
  EXPECT_EQ(band::training_classes("b200", 671, true)[0], "B200 MoE >=200B");
  band::CollectivePath p;
  p.multi_node = true;
  p.network_family = "ethernet";
  p.network_transport = "tcp";
  EXPECT_EQ(band::collective_classes(1 << 30, p).front(), ">=64MiB multi-node tcp");
  p.multi_node = false;
  p.gpu_fabric = "nvswitch";
  EXPECT_EQ(band::collective_classes(1024, p).front(), "<=64KiB 1 node nvswitch");
}

TEST(ErrorBand, LookupBacksOffToABroaderClassOnlyWhenItIsValidated) {
  const band::BandTable table({{"training", "X dense 3-30B", 3, 3, 1, 1},
                               {"training", "X dense", 20, 4, 0.9, 1.2},
                               {"training", "Y dense 3-30B", 2, 2, 1, 1},
                               {"training", "Y dense", 5, 3, 1, 1}});
  const auto x = table.lookup("training", {"X dense 3-30B", "X dense"});
  EXPECT_EQ(x.cls, "X dense");
  EXPECT_TRUE(x.validated());
  const auto y = table.lookup("training", {"Y dense 3-30B", "Y dense"});
  EXPECT_FALSE(y.validated());
  EXPECT_EQ(y.cls, "Y dense");  // the class with the most rows, to say how close it came
  EXPECT_EQ(y.rows, 5);
  const auto z = table.lookup("serving", {"throughput Z"});
  EXPECT_FALSE(z.validated());
  EXPECT_EQ(z.rows, 0);
}

TEST(ErrorBand, TheTableRefusesAnIntervalTurnedInsideOut) {
  const std::string bad =
      "schema_version: 1\nbands:\n  - {suite: training, class: a, rows: 9, sources: 3, ratio_low: 1.2, ratio_high: "
      "0.9}\n";
  EXPECT_THROW(band::parse_band_table(bad, "bands.yaml"), InputError);
  const std::string unknown = "schema_version: 1\nbands:\n  - {suite: trainig, class: a, rows: 1, sources: 1}\n";
  EXPECT_THROW(band::parse_band_table(unknown, "bands.yaml"), InputError);
}

TEST(ErrorBand, TheBuiltInTableHasValidatedClassesForTheCoreParts) {
  const auto& t = band::BandTable::builtin();
  EXPECT_TRUE(t.lookup("training", band::training_classes("h100-sxm5", 70, false)).validated());
  EXPECT_TRUE(t.lookup("serving", band::serving_classes(band::ServingMetric::throughput, "h100-sxm5")).validated());
  band::CollectivePath p;
  p.gpu_fabric = "nvswitch";
  EXPECT_TRUE(t.lookup("collectives", band::collective_classes(1 << 30, p)).validated());
  for (const auto& b : t.bands()) {
    if (b.validated()) {
      EXPECT_LE(b.ratio_low, b.ratio_high) << b.cls;
    }
  }
}

TEST(ErrorBand, TrainServeAndCollectiveCarryTheirBandsInJson) {
  const auto train = test::run_cli({"train", "--preset", "dgx-h100", "--model", "llama3.1-8b", "--tp", "2",
                                    "--global-batch", "64", "--format", "json"});
  ASSERT_EQ(train.code, 0) << train.err;
  const auto tj = nlohmann::json::parse(train.out);
  const auto& sb = tj.at("step_time_band_s");
  EXPECT_EQ(sb.at("class"), "H100-SXM5 dense 3-30B");
  EXPECT_LT(sb.at("low").get<double>(), sb.at("high").get<double>());
  EXPECT_GT(sb.at("rows").get<int>(), 0);
  const double step = tj.at("step_time_s").get<double>();
  EXPECT_LT(sb.at("low").get<double>(), step * 1.0001);
  EXPECT_GT(sb.at("high").get<double>(), step * 0.9999);

  const auto serve =
      test::run_cli({"serve", "--preset", "pcie-8x-l40s", "--model", "llama3.1-8b", "--tp", "1", "--isl", "128",
                     "--osl", "64", "--concurrency", "4", "--requests", "32", "--format", "json"});
  ASSERT_EQ(serve.code, 0) << serve.err;
  const auto sj = nlohmann::json::parse(serve.out).at("bands");
  EXPECT_TRUE(sj.at("ttft_mean_ms").contains("class"));
  EXPECT_TRUE(sj.at("output_tokens_per_s").contains("rows"));

  const auto coll =
      test::run_cli({"collective", "all_reduce", "--preset", "dgx-h100", "-b", "1G", "-e", "1G", "--format", "json"});
  ASSERT_EQ(coll.code, 0) << coll.err;
  const auto cj = nlohmann::json::parse(coll.out);
  const auto& cb = cj.at("rows").at(0).at("time_band_us");
  EXPECT_EQ(cb.at("class"), ">=64MiB 1 node nvswitch");
  EXPECT_TRUE(cb.contains("low"));
}

TEST(ErrorBand, TextOutputsSayUnvalidatedRatherThanInventABand) {
  // No training row ran on an RTX 4090: the answer says so.
  const auto r =
      test::run_cli({"train", "--preset", "pcie-4x-rtx4090", "--model", "gpt3-1.3b", "--global-batch", "16"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("(unvalidated: 0 rows like this: RTX-4090 dense <3B)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gf
