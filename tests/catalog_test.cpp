#include <gtest/gtest.h>

#include "test_support.hpp"

using gf::test::catalog;
using gf::test::input_error;

namespace gf {
namespace {

template <typename Map>
void expect_sources(const Map& m, const char* what) {
  EXPECT_FALSE(m.empty()) << what;
  for (const auto& [name, spec] : m) {
    EXPECT_FALSE(spec.source.empty()) << what << " " << name << " has no source";
  }
}

TEST(Catalog, EveryEntryCarriesASource) {
  const auto& c = catalog();
  expect_sources(c.gpus(), "gpu");
  expect_sources(c.cpus(), "cpu");
  expect_sources(c.nics(), "nic");
  expect_sources(c.switches(), "switch");
  expect_sources(c.networks(), "network");
  expect_sources(c.storages(), "storage");
  expect_sources(c.pcie_generations(), "pcie");
  expect_sources(c.nvlink_generations(), "nvlink");
  expect_sources(c.nvswitch_generations(), "nvswitch");
}

TEST(Catalog, HasTheGpusTheIssueNames) {
  for (const char* name :
       {"v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5", "h100-pcie", "h100-nvl",
        "h200-sxm", "b200", "l40s", "l4", "a10", "rtx-4090", "rtx-3090", "rtx-2080ti", "mi300x"}) {
    EXPECT_NO_THROW(catalog().gpu(name)) << name;
  }
}

TEST(Catalog, HasEveryNetworkTechnologyOfTheCli) {
  for (const char* name : {"eth-1g", "eth-10g", "eth-25g", "eth-100g", "eth-200g", "eth-400g", "roce-100g", "roce-200g",
                           "roce-400g", "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "efa"}) {
    EXPECT_NO_THROW(catalog().network(name)) << name;
  }
  for (int gen = 3; gen <= 6; ++gen) EXPECT_NO_THROW(catalog().pcie(gen));
  for (int gen = 1; gen <= 5; ++gen) EXPECT_NO_THROW(catalog().nvlink(gen));
  for (const char* nic : {"connectx-5", "connectx-6", "connectx-7", "bluefield-3", "efa-v1", "efa-v2"}) {
    EXPECT_NO_THROW(catalog().nic(nic)) << nic;
  }
}

TEST(Catalog, FiguresAreThePublishedOnes) {
  const auto& h100 = catalog().gpu("h100-sxm5");
  ASSERT_TRUE(h100.nvlink.has_value());
  EXPECT_EQ(h100.nvlink->generation, 4);
  EXPECT_EQ(h100.nvlink->links, 18);
  EXPECT_EQ(h100.pcie.generation, 5);
  EXPECT_EQ(h100.pcie.lanes, 16);
  EXPECT_NEAR(h100.tflops_dense.at("bf16"), 989.4, 1.0);  // Hopper whitepaper, dense
  EXPECT_TRUE(h100.mig_supported);
  EXPECT_FALSE(catalog().gpu("rtx-4090").p2p_supported);
  // PCIe Gen5 x16: 32 GT/s, 128b/130b -> about 63 GB/s per direction.
  EXPECT_NEAR(in_GBps(catalog().pcie(5).line_rate(16)), 63.0, 0.5);
  // NVLink 4: 25 GB/s per link per direction.
  EXPECT_NEAR(in_GBps(catalog().nvlink(4).link_rate), 25.0, 1e-9);
  // Measured efficiencies are fractions a copy can reach, not 1.0 placeholders.
  for (const auto& [gen, p] : catalog().pcie_generations()) {
    EXPECT_GT(p.copy_efficiency, 0.5) << gen;
    EXPECT_LT(p.copy_efficiency, 1.0) << gen;
  }
  EXPECT_TRUE(catalog().nvswitch(3).nvls);
  EXPECT_FALSE(catalog().nvswitch(2).nvls);
}

TEST(Catalog, UnknownKeyNamesFileLineAndSuggestion) {
  hw::Catalog c;
  const std::string msg =
      input_error([&] { c.load_text("gpus:\n  - name: x\n    vendor: nvidia\n    memroy_GB: 80\n", "mine.yaml"); });
  EXPECT_NE(msg.find("mine.yaml:4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("memroy_GB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'memory_GB'"), std::string::npos) << msg;
}

TEST(Catalog, ZeroBandwidthIsRejectedAtItsLine) {
  const std::string msg = input_error([&] {
    hw::Catalog c = hw::Catalog::builtin();
    c.load_directory(gf::test::data_file("catalog_zero_bw"));
  });
  EXPECT_NE(msg.find("gpus.yaml:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("memory_bandwidth_GBps"), std::string::npos) << msg;
  EXPECT_NE(msg.find("greater than zero"), std::string::npos) << msg;
}

TEST(Catalog, EmptySourceIsRejected) {
  hw::Catalog c;
  const std::string msg = input_error([&] {
    c.load_text(
        "switches:\n  - {name: s, family: infiniband, radix: 8, port_rate_Gbps: 100, latency_ns: 100, source: \" \"}\n",
        "s.yaml");
  });
  EXPECT_NE(msg.find("source"), std::string::npos) << msg;
}

TEST(Catalog, SharpSwitchesStateTheirAggregationRate) {
  // A SHARP switch without its aggregation rate would price CollNet at the port's RDMA rate;
  // a rate on a switch without SHARP would be silently ignored. Both are refused at the entry.
  const std::string sw =
      "switches:\n  - {name: s, family: infiniband, radix: 8, port_rate_Gbps: 100, latency_ns: 100, ";
  hw::Catalog c;
  const std::string missing = input_error([&] { c.load_text(sw + "sharp: true, source: x}\n", "s.yaml"); });
  EXPECT_NE(missing.find("s.yaml:2"), std::string::npos) << missing;
  EXPECT_NE(missing.find("sharp_efficiency"), std::string::npos) << missing;
  const std::string stray = input_error([&] { c.load_text(sw + "sharp_efficiency: 0.7, source: x}\n", "s.yaml"); });
  EXPECT_NE(stray.find("sharp: true"), std::string::npos) << stray;
  const std::string above =
      input_error([&] { c.load_text(sw + "sharp: true, sharp_efficiency: 1.5, source: x}\n", "s.yaml"); });
  EXPECT_NE(above.find("sharp_efficiency"), std::string::npos) << above;
  const hw::Catalog builtin = hw::Catalog::builtin();
  for (const auto& [name, s] : builtin.switches()) {
    if (s.sharp) {
      EXPECT_GT(s.sharp_efficiency, 0.0) << name;
    }
  }
}

TEST(Catalog, SyntaxErrorNamesTheLine) {
  hw::Catalog c;
  const std::string msg = input_error([&] { c.load_text("gpus:\n  - name: [x\n", "bad.yaml"); });
  EXPECT_NE(msg.find("bad.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
}

TEST(Catalog, UserDirectoryOverridesAndExtends) {
  hw::Catalog c = hw::Catalog::builtin();
  const double before = c.gpu("h100-sxm5").tdp.value();
  c.load_directory(gf::test::data_file("catalog_override"));
  EXPECT_EQ(before, 700.0);
  EXPECT_EQ(c.gpu("h100-sxm5").tdp.value(), 500.0);
  EXPECT_NEAR(in_Gbps(c.nic("test-nic-800").max_rate), 800.0, 1e-9);
  EXPECT_NO_THROW(c.gpu("b200"));  // the rest of the built-in catalog is still there
}

TEST(Catalog, UnknownNameListsValidOnes) {
  const std::string msg = input_error([&] { (void)catalog().gpu("h100-sxm"); });
  EXPECT_NE(msg.find("unknown GPU model 'h100-sxm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean"), std::string::npos) << msg;
  EXPECT_NE(msg.find("valid:"), std::string::npos) << msg;
}

// GPU memory is what nvidia-smi reports, cited per GPU, not the product name's GB read as 10^9
// bytes; a figure derived without a public output says so; a file without memory_MiB reads its
// memory_GB as GiB (a product's "80GB" is 80 GiB of DRAM) and is flagged as an estimate.
TEST(Catalog, GpuMemoryIsWhatNvidiaSmiReports) {
  const hw::Catalog builtin = hw::Catalog::builtin();
  constexpr double kMiB = 1024.0 * 1024;
  EXPECT_DOUBLE_EQ(builtin.gpu("h100-sxm5").memory.value(), 81559 * kMiB);
  EXPECT_DOUBLE_EQ(builtin.gpu("h100-sxm5").nominal_memory.value(), 80e9);
  EXPECT_DOUBLE_EQ(builtin.gpu("a100-sxm4-80gb").memory.value(), 81920 * kMiB);
  EXPECT_DOUBLE_EQ(builtin.gpu("h200-sxm").memory.value(), 143771 * kMiB);
  for (const auto& [name, g] : builtin.gpus()) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(g.memory_source.empty());
    // The driver keeps a little of the nominal GiB: under 1% on HBM boards, 1/16 on GDDR6 boards
    // with ECC on (A10, L4, L40S print 93.7%).
    const double nominal_GiB = g.nominal_memory.value() / 1e9 * 1024 * kMiB;
    EXPECT_GT(g.memory.value(), 0.93 * nominal_GiB);
    EXPECT_LE(g.memory.value(), 1.03 * nominal_GiB);
  }
  EXPECT_TRUE(builtin.gpu("h100-sxm5-96gb-500w").memory_estimated);
  EXPECT_FALSE(builtin.gpu("h100-sxm5").memory_estimated);
  hw::Catalog c = hw::Catalog::builtin();
  c.load_directory(gf::test::data_file("catalog_override"));
  EXPECT_DOUBLE_EQ(c.gpu("h100-sxm5").memory.value(), 80 * 1024 * kMiB);
  EXPECT_TRUE(c.gpu("h100-sxm5").memory_estimated);
}

}  // namespace
}  // namespace gf
