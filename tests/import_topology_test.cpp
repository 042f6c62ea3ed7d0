// The importers of NCCL's topology XML and nvidia-smi topo -m: each public sample in
// tests/data/import/ (cited in its README) imports, the cluster file loads, and the loaded
// topology has the file's GPUs, NVLinks, NICs and connection matrix.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "core/yaml_fields.hpp"
#include "test_support.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/import/nccl_topo_xml.hpp"
#include "topo/import/topo_matrix_text.hpp"
#include "topo/topology.hpp"

namespace {

using namespace gf;
using namespace gf::topo;

const hw::Catalog& import_catalog() {
  static const hw::Catalog c = hw::Catalog::builtin();
  return c;
}

std::string sample(const std::string& name) { return std::string(GPUFABRIC_SOURCE_DIR) + "/tests/data/import/" + name; }

std::string text_of(const std::string& path) { return read_text_file(path, "test"); }

ClusterSpec loaded(const import::ImportedCluster& c) {
  return parse_cluster(c.yaml, "imported.yaml", import_catalog());
}

// The connection matrix as `topo` prints it: GPUs then NICs, "X" on the diagonal.
std::vector<std::vector<std::string>> matrix(const ClusterSpec& spec) {
  const Topology t(spec, import_catalog());
  const auto& node = t.node();
  const int g = node.gpus(), n = node.nics();
  auto device = [&](int i) { return i < g ? node.gpu(i) : node.nic(i - g); };
  std::vector<std::vector<std::string>> m(static_cast<std::size_t>(g + n));
  for (int r = 0; r < g + n; ++r) {
    for (int c = 0; c < g + n; ++c) {
      m[static_cast<std::size_t>(r)].push_back(r == c             ? "X"
                                               : (r < g && c < g) ? node.gpu_to_gpu(r, c, true).label()
                                                                  : node.pcie_path(device(r), device(c)).label());
    }
  }
  return m;
}

// The matrix of a topo -m text, read independently of the importer (whitespace-separated rows).
std::vector<std::vector<std::string>> file_matrix(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::vector<std::string>> rows;
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    if (t.empty()) continue;
    if (t.front() == "GPU0" && n == 0) {
      for (const auto& w : t) {
        if (w == "CPU") break;
        ++n;
      }
      continue;
    }
    if (n > 0 && rows.size() < n && (t.front().starts_with("GPU") || t.front().starts_with("NIC"))) {
      rows.emplace_back(t.begin() + 1, t.begin() + 1 + static_cast<std::ptrdiff_t>(n));
    }
  }
  return rows;
}

TEST(ImportNcclTopo, HgxA100DumpKeepsItsGpusNvswitchesAndNics) {
  const auto c =
      import::import_nccl_topo(text_of(sample("simai-hgx-a100-8gpu.xml")), "simai.xml", import_catalog(), {});
  const auto spec = loaded(c);
  EXPECT_EQ(spec.node.gpu, "a100-sxm4-80gb");  // PCI device 0x20b2
  EXPECT_EQ(spec.node.gpus, 8);
  EXPECT_EQ(spec.node.gpu_fabric, GpuFabric::nvswitch);
  EXPECT_EQ(spec.node.nvswitch_count, 6);  // six distinct NVSwitch targets per GPU
  EXPECT_EQ(spec.node.nics.size(), 5u);
  EXPECT_EQ(spec.node.nics.front().model, "connectx-6");  // speed 200000 Mb/s
  EXPECT_EQ(spec.network.tech, "roce-200g");              // class 0x020000 from vendor 0x15b3
  EXPECT_EQ(spec.node.sockets, 2);
  // GPU-GPU as on the dgx-a100 preset; a GPU and the NIC of its complex PXB (two switch levels);
  // the bond on a root port NODE.
  const auto m = matrix(spec);
  const auto preset = matrix(load_preset("dgx-a100", import_catalog()));
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) EXPECT_EQ(m[a][b], preset[a][b]) << a << "," << b;
  }
  EXPECT_EQ(m[0][8 + 1], "PXB");
  EXPECT_EQ(m[1][8 + 1], "PXB");
  EXPECT_EQ(m[0][8 + 0], "NODE");
  EXPECT_EQ(m[0][8 + 3], "SYS");
  EXPECT_EQ(c.nvlinks_per_gpu, 12);
}

TEST(ImportNcclTopo, CloudFileByPciClassWarnsAndTakesGpuFlag) {
  const std::string text = text_of(sample("azure-ndv4-topo.xml"));
  const auto plain = import::import_nccl_topo(text, "ndv4.xml", import_catalog(), {});
  const auto spec = loaded(plain);
  EXPECT_EQ(spec.node.gpus, 8);
  EXPECT_EQ(spec.node.gpu_fabric, GpuFabric::pcie);  // nothing in the file shows NVLink
  EXPECT_EQ(spec.node.sockets, 4);                   // four <cpu> NUMA nodes
  EXPECT_EQ(spec.network.tech, "ib-hdr");            // 0x020700 on a Gen4 x16 link: 200 Gb/s
  bool gpu_warned = false;
  for (const auto& w : plain.warnings) gpu_warned = gpu_warned || w.find("PCI class only") != std::string::npos;
  EXPECT_TRUE(gpu_warned);
  EXPECT_NE(plain.yaml.find("# the file names GPUs by PCI class only"), std::string::npos);

  import::ImportOptions o;
  o.gpu = "a100-sxm4-80gb";
  o.nodes = 4;
  o.network = "ib-ndr";
  const auto sxm = loaded(import::import_nccl_topo(text, "ndv4.xml", import_catalog(), o));
  EXPECT_EQ(sxm.node.gpu_fabric, GpuFabric::nvswitch);
  EXPECT_EQ(sxm.node.nvswitch_count, 6);  // the NVSwitch gen-2 baseboard count of the presets
  EXPECT_EQ(sxm.nodes, 4);
  EXPECT_EQ(sxm.network.tech, "ib-ndr");
  EXPECT_EQ(sxm.node.nics.front().model, "connectx-7");  // a 200G NIC cannot run NDR: swapped
  const auto m = matrix(sxm);
  EXPECT_EQ(m[0][1], "NV12");
  EXPECT_EQ(m[0][8], "PIX");   // GPU and NIC under one virtual bridge
  EXPECT_EQ(m[0][10], "SYS");  // another NUMA node
}

TEST(ImportNcclTopo, VmDumpWithHiddenLinksMatchesDgxH100) {
  const auto c = import::import_nccl_topo(text_of(sample("ibm-vpc-h100-vsi.xml")), "ibm.xml", import_catalog(), {});
  const auto spec = loaded(c);
  EXPECT_EQ(spec.node.gpu, "h100-sxm5");   // 0x2330
  EXPECT_EQ(spec.node.cpu, "xeon-8480c");  // GenuineIntel 6/143
  EXPECT_EQ(spec.node.nvswitch_count, 4);  // four NVSwitch targets, 5+5+4+4 = 18 NVLinks
  EXPECT_EQ(c.nvlinks_per_gpu, 18);
  // The VM's x1 2.5 GT/s bridges are placeholders: written as their devices' Gen5 x16, once warned.
  for (const auto& sw : spec.node.pcie_switches) {
    EXPECT_EQ(sw.lanes, 16) << sw.name;
    EXPECT_EQ(sw.generation, 5) << sw.name;
  }
  int placeholder_warnings = 0;
  for (const auto& w : c.warnings) placeholder_warnings += w.find("placeholder bridge") != std::string::npos;
  EXPECT_EQ(placeholder_warnings, 1);
  // One GPU and one NIC per bridge, four per socket: the dgx-h100 preset's matrix.
  EXPECT_EQ(matrix(spec), matrix(load_preset("dgx-h100", import_catalog())));
}

TEST(ImportNcclTopo, PcieBoxDumpKeepsLinksAndGdr) {
  const auto c = import::import_nccl_topo(text_of(sample("nccl-2397-2xa100-pcie.xml")), "n.xml", import_catalog(), {});
  const auto spec = loaded(c);
  EXPECT_EQ(spec.node.gpu, "a100-pcie-80gb");  // 0x20b5
  EXPECT_EQ(spec.node.gpu_fabric, GpuFabric::pcie);
  EXPECT_EQ(spec.node.nics.size(), 2u);  // one dual-port card: two <net> ports
  EXPECT_EQ(spec.node.nics[0].at.lanes, 8);
  EXPECT_FALSE(spec.gpudirect);  // gdr="0"
  EXPECT_EQ(spec.network.tech, "roce-100g");
  const auto m = matrix(spec);
  EXPECT_EQ(m[0][1], "SYS");
  EXPECT_EQ(m[0][2], "NODE");
  EXPECT_EQ(m[1][2], "SYS");
}

TEST(ImportTopoMatrix, NvswitchBoxReproducesTheFilesMatrix) {
  const std::string text = text_of(sample("dranet-gke-a4-b200.topo-m.txt"));
  import::ImportOptions o;
  o.gpu = "b200";
  const auto c = import::import_topo_matrix(text, "b200.txt", import_catalog(), o);
  const auto spec = loaded(c);
  EXPECT_EQ(spec.node.gpus, 8);
  EXPECT_EQ(spec.node.nics.size(), 8u);
  EXPECT_EQ(spec.node.gpu_fabric, GpuFabric::nvswitch);
  EXPECT_EQ(matrix(spec), file_matrix(text));
  // Same PCIe tree as the dgx-b200 preset, built from the same kind of capture.
  EXPECT_EQ(matrix(spec), matrix(load_preset("dgx-b200", import_catalog())));
}

TEST(ImportTopoMatrix, PcieBoxReproducesTheFilesMatrix) {
  const std::string text = text_of(sample("nccl-tests-307-8x4090.topo-m.txt"));
  import::ImportOptions o;
  o.gpu = "rtx-4090";
  o.network = "roce-100g";
  const auto c = import::import_topo_matrix(text, "4090.txt", import_catalog(), o);
  const auto spec = loaded(c);
  EXPECT_EQ(spec.node.gpu_fabric, GpuFabric::pcie);
  EXPECT_EQ(spec.node.nics.size(), 1u);
  EXPECT_EQ(spec.node.sockets, 2);
  for (const auto& sw : spec.node.pcie_switches) EXPECT_EQ(sw.generation, 4);  // --gpu rtx-4090's own Gen4
  auto want = file_matrix(text);
  auto got = matrix(spec);
  ASSERT_EQ(got.size(), want.size());
  // The stock driver refuses P2P on GeForce, so GPU pairs print as staged through the host in
  // `topo`; the PCIe relation between a GPU and the NIC is the file's.
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i][8], want[i][8]) << i;
    EXPECT_EQ(got[8][i], want[8][i]) << i;
  }
  const Topology t(spec, import_catalog());
  EXPECT_EQ(t.node().pcie_path(t.node().gpu(0), t.node().gpu(3)).label(), "PIX");
  EXPECT_EQ(t.node().pcie_path(t.node().gpu(0), t.node().gpu(4)).label(), "SYS");
}

TEST(ImportTopoMatrix, DefaultsAreWarnedAndWrittenAsComments) {
  const auto c =
      import::import_topo_matrix(text_of(sample("dranet-gke-a4-b200.topo-m.txt")), "b200.txt", import_catalog(), {});
  EXPECT_EQ(loaded(c).node.gpu, "h100-sxm5");  // NV18 on NVSwitch: the stated default
  bool gpu = false, net = false;
  for (const auto& w : c.warnings) {
    gpu = gpu || w.starts_with("gpu h100-sxm5:");
    net = net || w.starts_with("network ib-ndr:");
  }
  EXPECT_TRUE(gpu);
  EXPECT_TRUE(net);
  EXPECT_NE(c.yaml.find("gpu: h100-sxm5  # topo -m does not name the GPU"), std::string::npos);
}

TEST(ImportBadInput, MalformedXmlNamesItsLine) {
  const auto e = test::thrown_input_error([] {
    (void)import::read_nccl_topo("<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"x\"\n</system>\n",
                                 "bad.xml", import_catalog());
  });
  EXPECT_EQ(e.where().file, "bad.xml");
  EXPECT_GE(e.where().line, 3);
  EXPECT_NE(e.problem().find("malformed XML"), std::string::npos);
}

TEST(ImportBadInput, NoGpusAndUnknownClass) {
  const auto none = test::thrown_input_error([] {
    (void)import::read_nccl_topo("<system version=\"1\">\n<cpu numaid=\"0\"/>\n</system>\n", "none.xml",
                                 import_catalog());
  });
  EXPECT_EQ(none.field(), "gpu");
  const auto cls = test::thrown_input_error([] {
    (void)import::read_nccl_topo(
        "<system version=\"1\">\n<cpu numaid=\"0\">\n<pci busid=\"0000:01:00.0\" class=\"0x010802\"/>\n</cpu>\n"
        "</system>\n",
        "nvme.xml", import_catalog());
  });
  EXPECT_EQ(cls.where().line, 3);
  EXPECT_EQ(cls.field(), "class");
  EXPECT_NE(cls.valid().find("0x0302xx"), std::string::npos);
}

TEST(ImportBadInput, TruncatedMatrixAndShortRow) {
  const std::string head = "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity\n";
  const auto truncated = test::thrown_input_error([&] {
    (void)import::read_topo_matrix(head + "GPU0     X      NV12    PIX     0-7     0\n", "t.txt", import_catalog());
  });
  EXPECT_NE(truncated.problem().find("truncated"), std::string::npos);
  const auto short_row = test::thrown_input_error([&] {
    (void)import::read_topo_matrix(head + "GPU0     X      NV12\nGPU1    NV12     X      PIX   0-7  0\n", "s.txt",
                                   import_catalog());
  });
  EXPECT_EQ(short_row.where().line, 2);
  EXPECT_EQ(short_row.field(), "GPU0");
  const auto entry = test::thrown_input_error([&] {
    (void)import::read_topo_matrix(head + "GPU0     X      NVX     PIX     0-7     0\n", "e.txt", import_catalog());
  });
  EXPECT_EQ(entry.where().line, 2);
}

TEST(ImportCli, WritesTheFileAndExitsTwoOnBadInput) {
  const std::string out = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/gf_import_test.yaml";
  const std::string in = sample("nccl-2397-2xa100-pcie.xml");
  {
    const char* argv[] = {"gpufabric", "import", "nccl-topo", in.c_str(), "-o", out.c_str()};
    std::ostringstream o, e;
    ASSERT_EQ(cli::run(6, argv, o, e), 0) << e.str();
    EXPECT_NE(o.str().find("wrote"), std::string::npos);
    EXPECT_NE(e.str().find("gpufabric: warning: host_memory_GB"), std::string::npos);
    EXPECT_EQ(parse_cluster(text_of(out), out, import_catalog()).node.gpus, 2);
    std::remove(out.c_str());
  }
  {
    // -o naming the input would replace the capture with its import.
    const std::string copy = out + ".xml";
    std::ofstream(copy) << text_of(in);
    const char* argv[] = {"gpufabric", "import", "nccl-topo", copy.c_str(), "-o", copy.c_str()};
    std::ostringstream o, e;
    EXPECT_EQ(cli::run(6, argv, o, e), 2);
    EXPECT_NE(e.str().find("--output"), std::string::npos) << e.str();
    EXPECT_EQ(text_of(copy), text_of(in));
    std::remove(copy.c_str());
  }
  {
    const std::string bad = sample("README.md");
    const char* argv[] = {"gpufabric", "import", "topo-m", bad.c_str()};
    std::ostringstream o, e;
    EXPECT_EQ(cli::run(4, argv, o, e), 2);
    EXPECT_NE(e.str().find("README.md"), std::string::npos);
  }
  {
    const char* argv[] = {"gpufabric", "import"};
    std::ostringstream o, e;
    EXPECT_EQ(cli::run(2, argv, o, e), 2);
    EXPECT_NE(e.str().find("nccl-topo"), std::string::npos) << e.str();
  }
}

}  // namespace

namespace {

using namespace gf;
using namespace gf::topo;

// Mechanisms the public samples do not reach, on small hand-written inputs.

TEST(ImportNcclTopoMechanisms, GpuToGpuNvlinksMakeAMeshAndSmNamesTheGpu) {
  // Two V100-class GPUs (sm 70, no device id) joined by 2 NVLinks to each other and 4 to a third.
  const std::string xml = R"(<system version="1">
  <cpu numaid="0" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:01:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="70"><nvlink target="0000:02:00.0" count="2" tclass="0x030200"/>
        <nvlink target="0000:03:00.0" count="4" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:02:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="70"><nvlink target="0000:01:00.0" count="2" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:03:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="8">
      <gpu dev="2" sm="70"><nvlink target="0000:01:00.0" count="4" tclass="0x030200"/></gpu>
    </pci>
  </cpu>
</system>
)";
  const auto d = import::read_nccl_topo(xml, "mesh.xml", import_catalog());
  EXPECT_EQ(d.gpu_fabric, GpuFabric::nvlink_mesh);
  ASSERT_EQ(d.nvlink_mesh.size(), 2u);
  EXPECT_EQ(d.nvlink_mesh[0].links, 2);
  EXPECT_EQ(d.nvlink_mesh[1].links, 4);
  EXPECT_EQ(d.gpu.value, "v100-sxm2-32gb");  // sm 70 with 6 NVLinks
  EXPECT_FALSE(d.gpu.note.empty());          // identified from sm: warned
  EXPECT_EQ(d.gpu_parents[2].lanes, 8);
  EXPECT_EQ(d.gpu_parents[2].generation, 3);
  const auto spec = parse_cluster(import::finish(d, {}, import_catalog()).yaml, "m.yaml", import_catalog());
  const Topology t(spec, import_catalog());
  EXPECT_EQ(t.node().gpu_to_gpu(0, 2, true).label(), "NV4");
  EXPECT_EQ(t.node().gpu_to_gpu(1, 2, true).label(), "NODE");  // no NVLink between 1 and 2: root ports
}

TEST(ImportTopoMatrixMechanisms, PxbGroupsGetASecondSwitchLevelAndPhbShareAHostBridge) {
  // GPU0/GPU1 PIX, both PXB to GPU2; GPU3 PHB to all three; one socket.
  const std::string text =
      "        GPU0    GPU1    GPU2    GPU3    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      PIX     PXB     PHB     0-7     0\n"
      "GPU1    PIX      X      PXB     PHB     0-7     0\n"
      "GPU2    PXB     PXB      X      PHB     0-7     0\n"
      "GPU3    PHB     PHB     PHB      X      0-7     0\n";
  const auto c = import::import_topo_matrix(text, "pxb.txt", import_catalog(), {});
  const auto spec = parse_cluster(c.yaml, "p.yaml", import_catalog());
  EXPECT_EQ(spec.node.pcie_switches.size(), 3u);  // a top switch and two PIX groups under it
  // No link speeds in topo -m: the switches run at the GPU's own generation (h100-pcie: Gen5).
  for (const auto& sw : spec.node.pcie_switches) EXPECT_EQ(sw.generation, 5);
  const Topology t(spec, import_catalog());
  const auto& n = t.node();
  EXPECT_EQ(n.pcie_path(n.gpu(0), n.gpu(1)).label(), "PIX");
  EXPECT_EQ(n.pcie_path(n.gpu(0), n.gpu(2)).label(), "PXB");
  EXPECT_EQ(n.pcie_path(n.gpu(0), n.gpu(3)).label(), "PHB");
}

TEST(ImportTopoMatrixMechanisms, NvlinkPairsBelowAGpusLinksAreAMesh) {
  // DGX-1-like: NV1/NV2 to some peers only, SYS across sockets.
  const std::string text =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV1\tNV2\tSYS\t0-19\t0\n"
      "GPU1\tNV1\t X \tSYS\tNV2\t0-19\t0\n"
      "GPU2\tNV2\tSYS\t X \tNV1\t20-39\t1\n"
      "GPU3\tSYS\tNV2\tNV1\t X \t20-39\t1\n";
  import::ImportOptions o;
  o.gpu = "v100-sxm2-32gb";
  const auto spec =
      parse_cluster(import::import_topo_matrix(text, "dgx1.txt", import_catalog(), o).yaml, "d.yaml", import_catalog());
  EXPECT_EQ(spec.node.gpu, "v100-sxm2-32gb");
  EXPECT_EQ(spec.node.gpu_fabric, GpuFabric::nvlink_mesh);
  EXPECT_EQ(spec.node.nvlink_mesh.size(), 4u);
  EXPECT_EQ(spec.node.sockets, 2);  // NUMA 0 and 1
  const Topology t(spec, import_catalog());
  EXPECT_EQ(t.node().gpu_to_gpu(0, 2, true).label(), "NV2");
  EXPECT_EQ(t.node().pcie_path(t.node().gpu(0), t.node().gpu(3)).label(), "SYS");
}

}  // namespace
