// Calibration from nccl-tests logs: synthetic logs made with known parameters give them back,
// a public sweep fits better after calibration, and bad logs and overlays are clear errors.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <cmath>

#include "calib/calibrate.hpp"
#include "comm/model.hpp"
#include "test_support.hpp"
#include "validate/collective_validation.hpp"

using gf::test::preset;

namespace gf::calib {
namespace {

topo::ClusterOverrides two_nodes() {
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.fabric = topo::FabricKind::fat_tree;
  return o;
}

// nccl-tests' table, as all_reduce_perf prints it, from the model with parameters `p`.
std::string synthetic_log(const topo::Topology& t, comm::Op op, const comm::NcclParams& p) {
  const comm::Communicator c(t, 0, {}, &p);
  std::string text =
      fmt::format("# Collective test starting: {}_perf\n#  nThread 1 nGpus 1 graph: 0\n#\n", comm::to_string(op));
  for (double s = 1024; s <= 1073741824.0; s *= 8) {
    comm::CollectiveRequest r;
    r.op = op;
    r.size = s;
    r.engine = comm::Engine::analytic;
    const auto res = comm::predict(c, r);
    text += fmt::format("{:>12.0f} {:>12.0f} float sum -1 {:>9.2f} {:>7.2f} {:>7.2f} 0 {:>9.2f} {:>7.2f} {:>7.2f} 0\n",
                        s, s / 4, res.time.value() * 1e6, res.algbw_GBps, res.busbw_GBps, res.time.value() * 1e6,
                        res.algbw_GBps, res.busbw_GBps);
  }
  return text;
}

double fitted(const Calibration& c, const std::string& name) {
  for (const auto& p : c.parameters)
    if (p.name == name) return p.fitted;
  ADD_FAILURE() << "no parameter " << name;
  return 0;
}

TEST(Calibrate, SyntheticLogsGiveBackTheParametersTheyWereMadeWith) {
  const auto t = preset("dgx-a100", two_nodes());
  comm::NcclParams truth = comm::nccl_params();
  truth.nvlink_efficiency[3] = 0.70;
  truth.network_efficiency = 0.75;
  truth.launch_overhead_us = 4.0;
  const std::vector<NcclTestsLog> logs = {
      parse_nccl_tests_log(synthetic_log(t, comm::Op::all_reduce, truth), "ar.log", ""),
      parse_nccl_tests_log(synthetic_log(t, comm::Op::all_gather, truth), "ag.log", "")};
  EXPECT_EQ(logs[0].op, "all_reduce");
  const auto cal = calibrate(t, 0, {}, logs, comm::nccl_params());
  EXPECT_NEAR(fitted(cal, "nvlink_efficiency"), 0.70, 0.01);
  EXPECT_NEAR(fitted(cal, "network_efficiency"), 0.75, 0.01);
  EXPECT_NEAR(fitted(cal, "launch_overhead_us"), 4.0, 0.2);
  for (const auto& f : cal.files) {
    EXPECT_GT(f.mape_catalog, 0.02) << f.file;
    EXPECT_LT(f.mape_fitted, 0.005) << f.file;
  }
  // The overlay reads back to the same parameters.
  const auto back = apply_calibration(calibration_yaml(cal), "cal.yaml", comm::nccl_params());
  EXPECT_NEAR(back.nvlink_efficiency.at(3), 0.70, 0.01);
  ASSERT_TRUE(back.network_efficiency.has_value());
  EXPECT_NEAR(*back.network_efficiency, 0.75, 0.01);
}

TEST(Calibrate, APublicSweepFitsBetterAfterCalibration) {
  // Crusoe's 2 x DGX A100 all_reduce sweep (data/validation/collectives_tables.yaml).
  std::string text = "# Collective test starting: all_reduce_perf\n";
  int rows = 0;
  for (const auto& r : validate::builtin_collective_rows()) {
    if (!r.id.starts_with("crusoe-a100-2n-ar-") || !r.time_us) continue;
    text += fmt::format("{:.0f} {:.0f} float sum -1 {:.2f} 0 {:.2f} 0\n", r.size_bytes, r.size_bytes / 4, *r.time_us,
                        r.busbw_GBps.value_or(0));
    ++rows;
  }
  ASSERT_GE(rows, 6);
  const auto t = preset("dgx-a100", two_nodes());
  const auto cal = calibrate(t, 0, {}, {parse_nccl_tests_log(text, "crusoe.log", "")}, comm::nccl_params());
  ASSERT_EQ(cal.files.size(), 1u);
  EXPECT_LT(cal.files[0].mape_fitted, cal.files[0].mape_catalog * 0.8)
      << cal.files[0].mape_catalog << " -> " << cal.files[0].mape_fitted;
  for (const auto& p : cal.parameters) {
    EXPECT_TRUE(std::isfinite(p.fitted)) << p.name;
  }
}

TEST(Calibrate, BadLogsAndOverlaysAreClearErrors) {
  const std::string empty =
      gf::test::input_error([] { (void)parse_nccl_tests_log("# nothing\n", "x.log", "all_reduce"); });
  EXPECT_NE(empty.find("x.log"), std::string::npos) << empty;
  EXPECT_NE(empty.find("no nccl-tests table rows"), std::string::npos) << empty;
  const std::string unknown =
      gf::test::input_error([] { (void)parse_nccl_tests_log("8 2 float sum -1 1 0 0 0\n", "run.log", ""); });
  EXPECT_NE(unknown.find("FILE:OP"), std::string::npos) << unknown;
  const std::string garbled = gf::test::input_error(
      [] { (void)parse_nccl_tests_log("#\n8 2 float sum -1 fast 0 0 0\n", "g.log", "all_reduce"); });
  EXPECT_NE(garbled.find("g.log:2"), std::string::npos) << garbled;
  const std::string range = gf::test::input_error([] {
    (void)apply_calibration("nvlink_generation: 4\nparameters:\n  nvlink_efficiency: {catalog: 0.8, fitted: 7}\n",
                            "c.yaml", comm::nccl_params());
  });
  EXPECT_NE(range.find("c.yaml:3"), std::string::npos) << range;
  EXPECT_NE(range.find("out of range"), std::string::npos) << range;
}

}  // namespace
}  // namespace gf::calib
