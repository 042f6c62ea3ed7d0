#include <gtest/gtest.h>

#include "test_support.hpp"

using gf::test::catalog;
using gf::test::data_file;
using gf::test::input_error;

namespace gf {
namespace {

TEST(Presets, AllThirteenExistAndBuild) {
  const std::vector<std::string> expected{"aws-p4d",           "aws-p5",          "dgx-a100",      "dgx-b200",
                                          "dgx-h100",          "dgx1-v100",       "hgx-h100-4gpu", "hgx-h200",
                                          "pcie-2x-rtx2080ti", "pcie-4x-rtx4090", "pcie-8x-a100",  "pcie-8x-h100",
                                          "pcie-8x-l40s"};
  EXPECT_EQ(topo::preset_names(), expected);
  for (const auto& name : expected) {
    SCOPED_TRACE(name);
    const auto spec = topo::load_preset(name, catalog());
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.source.empty());
    EXPECT_NO_THROW(topo::Topology(spec, catalog()));
  }
}

TEST(Presets, UnknownPresetSuggestsTheClosest) {
  const std::string msg = input_error([] { (void)topo::load_preset("dgx-h10", catalog()); });
  EXPECT_NE(msg.find("unknown preset 'dgx-h10'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'dgx-h100'"), std::string::npos) << msg;
}

TEST(ClusterFile, LoadsAValidFile) {
  const auto spec = topo::load_cluster_file(data_file("small_pcie.yaml"), catalog());
  EXPECT_EQ(spec.node.gpus, 4);
  EXPECT_EQ(spec.node.pcie_switches.size(), 3u);
  EXPECT_EQ(spec.network.tech, "ib-hdr");
}

TEST(ClusterFile, SyntaxErrorNamesFileAndLine) {
  const std::string msg = input_error([] { (void)topo::load_cluster_file(data_file("bad_syntax.yaml"), catalog()); });
  EXPECT_NE(msg.find("bad_syntax.yaml:5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
}

TEST(ClusterFile, UnknownKeyNamesLineAndSuggests) {
  const std::string msg = input_error([] { (void)topo::load_cluster_file(data_file("unknown_key.yaml"), catalog()); });
  EXPECT_NE(msg.find("unknown_key.yaml:8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node.gpu_fabirc"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'gpu_fabric'"), std::string::npos) << msg;
}

TEST(ClusterFile, UnknownGpuModelNamesLine) {
  const std::string msg = input_error([] { (void)topo::load_cluster_file(data_file("unknown_gpu.yaml"), catalog()); });
  EXPECT_NE(msg.find("unknown_gpu.yaml:3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown GPU model 'h100-sxm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("h100-sxm5"), std::string::npos) << msg;
}

TEST(ClusterFile, NicUnderMissingSwitch) {
  const std::string msg = input_error([] {
    const auto spec = topo::load_cluster_file(data_file("nic_missing_switch.yaml"), catalog());
    topo::Topology t(spec, catalog());
  });
  EXPECT_NE(msg.find("nic_missing_switch.yaml:14"), std::string::npos) << msg;
  EXPECT_NE(msg.find("parent 'plx9'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'plx0'"), std::string::npos) << msg;
}

TEST(ClusterFile, PcieCycle) {
  const std::string msg = input_error([] {
    const auto spec = topo::load_cluster_file(data_file("pcie_cycle.yaml"), catalog());
    topo::Topology t(spec, catalog());
  });
  EXPECT_NE(msg.find("pcie_cycle.yaml:10"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cycle: a -> b -> a"), std::string::npos) << msg;
}

TEST(ClusterFile, ZeroMemoryIsRejected) {
  const std::string msg = input_error([] { (void)topo::load_cluster_file(data_file("zero_memory.yaml"), catalog()); });
  EXPECT_NE(msg.find("zero_memory.yaml:6"), std::string::npos) << msg;
  EXPECT_NE(msg.find("host_memory_GB"), std::string::npos) << msg;
}

TEST(ClusterFile, MissingFile) {
  const std::string msg = input_error([] { (void)topo::load_cluster_file(data_file("nope.yaml"), catalog()); });
  EXPECT_NE(msg.find("not a readable file"), std::string::npos) << msg;
}

TEST(ClusterText, NvlinkCountsMustFitTheGpu) {
  const std::string text = R"(name: too-many-links
node:
  gpu: h100-sxm5
  gpus: 2
  cpu: xeon-8480c
  host_memory_GB: 100
  gpu_fabric: nvlink-mesh
  nvlink_mesh:
    - {gpus: [0, 1], links: 19}
  gpu_parents: [cpu0, cpu0]
network: {tech: ib-ndr}
)";
  const std::string msg =
      input_error([&] { topo::Topology t(topo::parse_cluster(text, "links.yaml", catalog()), catalog()); });
  EXPECT_NE(msg.find("links.yaml:9"), std::string::npos) << msg;
}

TEST(Overrides, ApplyAndCheck) {
  auto spec = topo::load_preset("dgx-h100", catalog());
  topo::ClusterOverrides o;
  o.nodes = 4;
  o.network = "roce-400g";
  o.nics_per_node = 4;
  o.fabric = topo::FabricKind::fat_tree;
  o.p2p = false;
  topo::apply_overrides(spec, o, catalog());
  EXPECT_EQ(spec.nodes, 4);
  EXPECT_EQ(spec.network.tech, "roce-400g");
  EXPECT_EQ(spec.node.nics.size(), 4u);
  EXPECT_FALSE(spec.p2p);

  topo::ClusterOverrides bad;
  bad.network = "eth-5g";
  const std::string msg = input_error([&] { topo::apply_overrides(spec, bad, catalog()); });
  EXPECT_NE(msg.find("--network"), std::string::npos) << msg;
  EXPECT_NE(msg.find("eth-10g"), std::string::npos) << msg;
}

TEST(Overrides, NetworkWithIncompatibleNicSwapsToTheDefaultNic) {
  auto spec = topo::load_preset("dgx-h100", catalog());
  topo::ClusterOverrides o;
  o.network = "efa";
  topo::apply_overrides(spec, o, catalog());
  EXPECT_EQ(spec.node.nics.front().model, catalog().network("efa").default_nic);
  EXPECT_NO_THROW(topo::Topology(spec, catalog()));
}

TEST(Overrides, GpuTakesEverySlotOfADesignWithItsPorts) {
  // A DGX A100 of 40 GB parts: same NVLink ports, the 40 GB part's memory bandwidth.
  auto spec = topo::load_preset("dgx-a100", catalog());
  topo::ClusterOverrides o;
  o.gpu = "a100-sxm4-40gb";
  topo::apply_overrides(spec, o, catalog());
  EXPECT_EQ(spec.node.gpu, "a100-sxm4-40gb");
  const topo::Topology t(spec, catalog());
  EXPECT_EQ(t.gpu_spec().name, "a100-sxm4-40gb");
  EXPECT_NEAR(t.gpu_spec().memory_bandwidth.value(), 1555e9, 1e6);

  // An H100 has 18 NVLink 4 links; the DGX A100's NVSwitches wire 12 NVLink 3 links per GPU.
  auto a100 = topo::load_preset("dgx-a100", catalog());
  topo::ClusterOverrides bad;
  bad.gpu = "h100-sxm5";
  const std::string msg = input_error([&] { topo::apply_overrides(a100, bad, catalog()); });
  EXPECT_NE(msg.find("--gpu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("12 NVLink 3 links"), std::string::npos) << msg;

  // A PCIe server takes any GPU.
  auto pcie = topo::load_preset("pcie-8x-h100", catalog());
  topo::ClusterOverrides l40s;
  l40s.gpu = "l40s";
  topo::apply_overrides(pcie, l40s, catalog());
  EXPECT_EQ(pcie.node.gpu, "l40s");
}

}  // namespace
}  // namespace gf
