// Tests of the probe module: sysfs readers on a fake tree, catalog matching, the profile's JSON
// round trip and its errors, the expectations on healthy and degraded profiles, and small real
// measurements (memory, storage, decode) checked for sanity only, never for time.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "probe/catalog_match.hpp"
#include "probe/cuda_probe.hpp"
#include "probe/decode.hpp"
#include "probe/expectations.hpp"
#include "probe/hwloc_topology.hpp"
#include "probe/memory_bandwidth.hpp"
#include "probe/mpi_probe.hpp"
#include "probe/probe_report.hpp"
#include "probe/profile_json.hpp"
#include "probe/storage.hpp"
#include "probe/sysfs.hpp"
#include "probe/temp_file.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"

namespace gf {
namespace {

namespace fs = std::filesystem;
using namespace probe;
using test::run_cli;

const std::string kRoot = std::string(GPUFABRIC_TEST_DATA) + "/probe_sysfs";

using test::ScratchDir;

// An HGX H100 node as it should be: 2 x Xeon 8480C, 8 x H100 SXM5 at Gen5 x16 with 18 NVLinks,
// a ConnectX-7 at NDR 400, STREAM triad at 78% of theoretical, pinned copies at catalog efficiency.
Profile healthy_profile() {
  Profile p;
  p.gpufabric_version = "test";
  p.measured_at = "2026-01-01T00:00:00Z";
  p.quick = true;
  auto& d = p.discovery;
  d.hostname = "node1";
  d.cpu_model = "Intel(R) Xeon(R) Platinum 8480C";
  d.packages = 2;
  d.cores = 112;
  d.threads = 224;
  d.memory = gibibytes(2048);
  d.numa_nodes = {{0, gibibytes(1024), 56}, {1, gibibytes(1024), 56}};
  d.gpu_source = "nvml";
  PciDeviceInfo dev;
  dev.address = "0000:18:00.0";
  dev.vendor_id = 0x10de;
  dev.device_id = 0x2330;
  dev.class_id = 0x0302;
  dev.link = gigabytes_per_second(63.0);
  dev.os_devices = {"card1"};
  d.pci_devices.push_back(dev);
  for (int i = 0; i < 2; ++i) {
    GpuInfo g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_address = "0000:1" + std::to_string(8 + i) + ":00.0";
    g.pcie = {5, 16, 5, 16};
    g.pcie_under_load = true;
    g.nvlinks_active = 18;
    d.gpus.push_back(g);
  }
  NicInfo nic;
  nic.name = "mlx5_0/1";
  nic.kind = "infiniband";
  nic.speed = gigabits_per_second(400);
  nic.state = "ACTIVE";
  nic.pci_address = "0000:29:00.0";
  nic.vendor_id = 0x15b3;
  nic.device_id = 0x1021;
  nic.model = "connectx-7";
  nic.pcie = {5, 16, 5, 16};
  d.nics.push_back(nic);
  d.notes = {"a note"};
  for (int n = 0; n < 2; ++n) {
    p.memory.push_back(
        {n, 56, Bytes(2147483648.0), Bytes(105.0 * 1048576), 10, gigabytes_per_second(230), gigabytes_per_second(240)});
  }
  p.storage = StorageResult{"/data",
                            "xfs",
                            Bytes(268435456),
                            Bytes(1048576),
                            true,
                            gigabytes_per_second(2.5),
                            gigabytes_per_second(6.8),
                            "O_DIRECT, 1024 KiB blocks, queue depth 1"};
  DecodeResult dec;
  dec.width = 500;
  dec.height = 375;
  dec.quality = 90;
  dec.jpeg_size = Bytes(61234);
  dec.threads = 224;
  dec.jpeg_per_core = ImageRate(610);
  dec.jpeg_all_cores = ImageRate(98000);
  dec.inflate_per_core = Bandwidth(420e6);
  dec.inflate_all_cores = Bandwidth(60e9);
  dec.deflate_ratio = 1.7;
  p.decode = dec;
  GpuResults g;
  for (int i = 0; i < 2; ++i) {
    for (const char* dir : {"h2d", "d2h"}) {
      CopyCurve c;
      c.gpu = i;
      c.pci_address = d.gpus[static_cast<std::size_t>(i)].pci_address;
      c.direction = dir;
      c.memory = "pinned";
      c.points = {{Bytes(65536), gigabytes_per_second(20)}, {Bytes(268435456), gigabytes_per_second(53)}};
      g.copies.push_back(c);
    }
  }
  g.peers = {{0, 1, true, gigabytes_per_second(370)}, {1, 0, true, gigabytes_per_second(371)}};
  g.nccl = CollectiveResult{"all_reduce",
                            "nccl",
                            2,
                            Bytes(268435456),
                            microseconds(1500),
                            gigabytes_per_second(179),
                            gigabytes_per_second(179)};
  g.notes = {"gpu note"};
  p.gpu = g;
  MpiResults m;
  m.ranks = 2;
  m.hosts = 2;
  m.library = "Open MPI v4.1.4";
  m.pairs = {{0, 1, "node1", "node2", Bytes(67108864), gigabytes_per_second(48), microseconds(2.1)}};
  m.allreduce = CollectiveResult{
      "all_reduce", "mpi", 2, Bytes(67108864), microseconds(3000), gigabytes_per_second(22), gigabytes_per_second(22)};
  p.mpi = m;
  return p;
}

// Same structure and strings; numbers equal to 1e-12 (units convert through SI on the way in).
bool same_json(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-12 * std::max(std::abs(x), std::abs(y));
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key()) || !same_json(it.value(), b.at(it.key()))) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_json(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

bool flagged(const std::vector<Expectation>& rows, const std::string& item_part) {
  for (const auto& r : rows) {
    if (r.item.find(item_part) != std::string::npos && r.status == Status::below) return true;
  }
  return false;
}

TEST(ProbeSysfs, InfinibandPortRateStateAndModel) {
  const auto ports = sysfs::infiniband_ports(kRoot);
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].name, "mlx5_0/1");
  EXPECT_EQ(ports[0].kind, "infiniband");
  ASSERT_TRUE(ports[0].speed);
  EXPECT_DOUBLE_EQ(in_Gbps(*ports[0].speed), 400);
  EXPECT_EQ(ports[0].state, "ACTIVE");
  EXPECT_EQ(ports[0].model, "connectx-7");
  EXPECT_EQ(ports[0].pci_address, "0000:29:00.0");
  EXPECT_EQ(ports[0].pcie.generation, 5);
  EXPECT_EQ(ports[0].pcie.width, 16);
}

TEST(ProbeSysfs, NetInterfacesSkipVirtualAndReadSpeedAndLink) {
  const auto nics = sysfs::net_interfaces(kRoot);
  ASSERT_EQ(nics.size(), 2u);  // lo has no device
  EXPECT_EQ(nics[0].name, "ens1f0");
  ASSERT_TRUE(nics[0].speed);
  EXPECT_DOUBLE_EQ(in_Gbps(*nics[0].speed), 100);
  EXPECT_EQ(nics[0].model, "connectx-7");
  EXPECT_EQ(nics[0].pcie.generation, 4);
  EXPECT_EQ(nics[0].pcie.width, 8);
  EXPECT_EQ(nics[0].pcie.max_generation, 5);
  EXPECT_EQ(nics[0].pcie.max_width, 16);
  EXPECT_EQ(nics[1].name, "eth9");
  EXPECT_FALSE(nics[1].speed) << "speed -1 means link down, not a speed";
  EXPECT_EQ(nics[1].model, "");
}

TEST(ProbeSysfs, NvidiaGpusAreDisplayOr3dControllersOnly) {
  const auto gpus = sysfs::nvidia_gpus(kRoot);
  ASSERT_EQ(gpus.size(), 1u);  // the NVSwitch bridge function (class 0680) is not a GPU
  EXPECT_EQ(gpus[0].pci_address, "0000:17:00.0");
  EXPECT_EQ(gpus[0].name, "NVIDIA H100 SXM5 80GB");  // named from its PCI ID without a driver
  EXPECT_EQ(gpu_model_for_name(gpus[0].name), "h100-sxm5");
  EXPECT_EQ(gpus[0].pcie.generation, 3);
  EXPECT_EQ(gpus[0].pcie.width, 8);
  EXPECT_EQ(gpus[0].pcie.max_generation, 5);
  EXPECT_EQ(gpus[0].pcie.max_width, 16);
}

TEST(ProbeSysfs, ProcFilesAndParsers) {
  EXPECT_EQ(sysfs::cpu_model(kRoot), "Intel(R) Xeon(R) Platinum 8480C");
  EXPECT_DOUBLE_EQ(sysfs::memory_total(kRoot).value(), 2113929216.0 * 1024);
  EXPECT_DOUBLE_EQ(sysfs::memory_available(kRoot).value(), 2013265920.0 * 1024);
  EXPECT_EQ(sysfs::parse_link_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(sysfs::parse_link_speed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(sysfs::parse_link_speed("64.0 GT/s PCIe"), 6);
  EXPECT_EQ(sysfs::parse_link_speed("Unknown"), 0);
  EXPECT_EQ(sysfs::parse_link_speed(""), 0);
  EXPECT_FALSE(sysfs::parse_ib_rate("invalid"));
  EXPECT_DOUBLE_EQ(in_Gbps(*sysfs::parse_ib_rate("200 Gb/sec (4X HDR)")), 200);
  EXPECT_TRUE(sysfs::net_interfaces("/nonexistent-root").empty());
}

TEST(ProbeCatalogMatch, NamesAndIds) {
  EXPECT_EQ(gpu_model_for_name("NVIDIA H100 80GB HBM3"), "h100-sxm5");
  EXPECT_EQ(gpu_model_for_name("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(gpu_model_for_name("NVIDIA H100 NVL"), "h100-nvl");
  EXPECT_EQ(gpu_model_for_name("NVIDIA H200"), "h200-sxm");
  EXPECT_EQ(gpu_model_for_name("NVIDIA H200 NVL"), "");
  EXPECT_EQ(gpu_model_for_name("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
  EXPECT_EQ(gpu_model_for_name("NVIDIA A100 80GB PCIe"), "a100-pcie-80gb");
  EXPECT_EQ(gpu_model_for_name("Tesla V100-SXM2-32GB"), "v100-sxm2-32gb");
  EXPECT_EQ(gpu_model_for_name("NVIDIA GeForce RTX 4090"), "rtx-4090");
  EXPECT_EQ(gpu_model_for_name("NVIDIA GeForce RTX 3090 Ti"), "");
  EXPECT_EQ(gpu_model_for_name("NVIDIA L4"), "l4");
  EXPECT_EQ(gpu_model_for_name("NVIDIA L40S"), "l40s");
  EXPECT_EQ(gpu_model_for_name("NVIDIA A10"), "a10");
  EXPECT_EQ(gpu_model_for_name("NVIDIA A100-SXM4-40GB"), "a100-sxm4-40gb");
  // Every model the rules name exists in the catalog.
  for (const char* n : {"NVIDIA H100 80GB HBM3", "NVIDIA B200", "AMD Instinct MI300X", "NVIDIA GeForce RTX 2080 Ti"}) {
    EXPECT_EQ(test::catalog().gpus().count(gpu_model_for_name(n)), 1u) << n;
  }
  EXPECT_EQ(nic_model_for_pci(0x15b3, 0x1021), "connectx-7");
  EXPECT_EQ(nic_model_for_pci(0x15b3, 0x101d), "") << "ConnectX-6 Dx is not the 200G VPI part";
  EXPECT_EQ(test::catalog().nics().count(nic_model_for_pci(0x1d0f, 0xefa1)), 1u);
  EXPECT_EQ(cpu_model_for_name("Intel(R) Xeon(R) Platinum 8480C", test::catalog()), "xeon-8480c");
  EXPECT_EQ(cpu_model_for_name("AMD EPYC 7742 64-Core Processor", test::catalog()), "epyc-7742");
  EXPECT_EQ(cpu_model_for_name("Intel(R) Xeon(R) CPU E5-2698 v4 @ 2.20GHz", test::catalog()), "xeon-e5-2698v4");
  EXPECT_EQ(cpu_model_for_name("Intel(R) Xeon(R) Processor", test::catalog()), "");
}

TEST(ProbeProfile, JsonRoundTripKeepsEveryField) {
  const Profile p = healthy_profile();
  const auto j = profile_to_json(p);
  EXPECT_EQ(j["schema_version"], kProfileSchemaVersion);
  EXPECT_TRUE(j["memory"][0].contains("copy_GBps"));
  EXPECT_TRUE(j["discovery"]["nics"][0].contains("speed_Gbps"));
  const Profile back = profile_from_json(j.dump(2), "p.json");
  EXPECT_TRUE(same_json(profile_to_json(back), j)) << nlohmann::json::diff(profile_to_json(back), j).dump();
  EXPECT_DOUBLE_EQ(back.memory[1].triad.value(), p.memory[1].triad.value());
  EXPECT_DOUBLE_EQ(back.mpi->pairs[0].latency.value(), p.mpi->pairs[0].latency.value());
}

// The GEMM measurements `train --compute-profile` reads: kept through a save and a load, and a
// precision or rate that cannot be one is an error naming the entry.
TEST(ProbeProfile, GemmMeasurementsRoundTripAndAreChecked) {
  Profile p = healthy_profile();
  if (!p.gpu) p.gpu.emplace();
  p.gpu->gemms.push_back({0, "bf16", 8192, 8192, 8192, 712.5});
  const auto j = profile_to_json(p);
  const Profile back = profile_from_json(j.dump(), "p.json");
  ASSERT_EQ(back.gpu->gemms.size(), 1U);
  EXPECT_DOUBLE_EQ(back.gpu->gemms[0].tflops, 712.5);
  EXPECT_EQ(back.gpu->gemms[0].k, 8192);
  for (const auto& [key, value] :
       {std::pair<std::string, nlohmann::json>{"precision", "int4"}, {"tflops", 1e9}, {"tflops", -1}, {"gpu", 999}}) {
    auto bad = j;
    bad["gpu"]["gemm"][0][key] = value;
    try {
      (void)profile_from_json(bad.dump(), "bad.json");
      FAIL() << key;
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "gpu.gemm[0]." + key);
    }
  }
}

TEST(ProbeProfile, ErrorsNameTheFileAndField) {
  auto j = profile_to_json(healthy_profile());
  j["memory"][0]["copy_GBps"] = "fast";
  try {
    (void)profile_from_json(j.dump(), "bad.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "bad.json");
    EXPECT_EQ(e.field(), "memory[0].copy_GBps");
  }
  j = profile_to_json(healthy_profile());
  j["discovery"]["gpus"][1]["pcie"].erase("max_width");
  EXPECT_THROW((void)profile_from_json(j.dump(), "x.json"), InputError);
  j = profile_to_json(healthy_profile());
  j["schema_version"] = 99;
  try {
    (void)profile_from_json(j.dump(), "x.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "schema_version");
  }
  try {
    (void)profile_from_json("{\n  \"schema\": \"gpufabric-probe\",\n  oops\n}", "broken.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
  }
  EXPECT_THROW((void)profile_from_json("[]", "x.json"), InputError);
}

TEST(ProbeCompare, HealthyProfilePasses) {
  const auto rows = compare(healthy_profile(), test::catalog());
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) EXPECT_NE(r.status, Status::below) << r.item << ": " << r.measured << " vs " << r.expected;
  // Every kind of check ran: memory, GPU link, NVLink, pinned copies, NIC speed and link.
  for (const char* item : {"memory triad (node 0)", "GPU0 PCIe link", "GPU1 NVLinks active", "GPU0 H2D pinned",
                           "GPU1 D2H pinned", "NIC mlx5_0/1 speed", "NIC mlx5_0/1 PCIe link"}) {
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const Expectation& r) {
      return r.item.find(item) != std::string::npos;
    })) << item;
  }
}

TEST(ProbeCompare, DegradedProfileIsFlagged) {
  Profile p = healthy_profile();
  p.discovery.gpus[1].pcie = {3, 8, 5, 16};  // trained at Gen3 x8 of Gen5 x16
  p.discovery.gpus[0].nvlinks_active = 12;   // 6 of 18 NVLinks down
  p.discovery.nics[0].speed = gigabits_per_second(100);
  p.memory[1].triad = gigabytes_per_second(150);                        // below 60% of 307.2 GB/s
  p.gpu->copies[0].points.back().bandwidth = gigabytes_per_second(30);  // GPU0 H2D
  const auto rows = compare(p, test::catalog());
  EXPECT_TRUE(flagged(rows, "GPU1 PCIe link"));
  EXPECT_FALSE(flagged(rows, "GPU0 PCIe link"));
  EXPECT_TRUE(flagged(rows, "GPU0 NVLinks active"));
  EXPECT_TRUE(flagged(rows, "NIC mlx5_0/1 speed"));
  EXPECT_TRUE(flagged(rows, "memory triad (node 1)"));
  EXPECT_FALSE(flagged(rows, "memory triad (node 0)"));
  EXPECT_TRUE(flagged(rows, "GPU0 H2D"));
  EXPECT_FALSE(flagged(rows, "GPU0 D2H"));
  EXPECT_NE(compare_text(rows).find("BELOW"), std::string::npos);
}

TEST(ProbeCompare, CatalogMaximumCatchesASlotBelowTheGpu) {
  // The device itself reports Gen4 as its maximum (a Gen4 slot), but the H100 SXM5 is a Gen5 part.
  Profile p = healthy_profile();
  p.discovery.gpus[0].pcie = {4, 16, 4, 16};
  EXPECT_TRUE(flagged(compare(p, test::catalog()), "GPU0 PCIe link"));
}

TEST(ProbeCompare, SysfsTreeFlagsTheDegradedNicAndGpu) {
  Profile p;
  p.discovery.cpu_model = sysfs::cpu_model(kRoot);
  p.discovery.gpus = sysfs::nvidia_gpus(kRoot);
  p.discovery.gpu_source = "sysfs";
  p.discovery.nics = sysfs::infiniband_ports(kRoot);
  for (auto& n : sysfs::net_interfaces(kRoot)) p.discovery.nics.push_back(n);
  const auto rows = compare(p, test::catalog());
  EXPECT_TRUE(flagged(rows, "GPU0 PCIe link"));
  EXPECT_TRUE(flagged(rows, "NIC ens1f0 speed"));
  EXPECT_TRUE(flagged(rows, "NIC ens1f0 PCIe link"));
  EXPECT_FALSE(flagged(rows, "NIC mlx5_0/1 speed"));
  EXPECT_FALSE(flagged(rows, "NIC eth9 speed")) << "a NIC the catalog does not know has no expectation";
}

TEST(ProbeCli, LoadCompareAndBadProfile) {
  ScratchDir dir;
  const std::string good = dir.file("good.json");
  std::ofstream(good) << profile_to_json(healthy_profile()).dump(2);
  auto r = run_cli({"probe", "--load", good, "--compare"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Measured against expected (0 BELOW)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("triad GB/s"), std::string::npos);
  r = run_cli({"probe", "--profile", good, "--compare", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("compare"));
  EXPECT_EQ(j["discovery"]["hostname"], "node1");

  auto bad = profile_to_json(healthy_profile());
  bad["discovery"]["nics"][0]["speed_Gbps"] = -5;
  const std::string bad_file = dir.file("bad.json");
  std::ofstream(bad_file) << bad.dump(2);
  r = run_cli({"probe", "--load", bad_file});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("discovery.nics[0].speed_Gbps"), std::string::npos) << r.err;

  r = run_cli({"probe", "--load", dir.file("missing.json")});
  EXPECT_EQ(r.code, 2) << r.err;
  r = run_cli({"probe", "--parts", "memry"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("did you mean 'memory'"), std::string::npos) << r.err;
  r = run_cli({"probe", "--format", "csv"});
  EXPECT_EQ(r.code, 2);
  r = run_cli({"probe", "--load", good, "--mpi"});
  EXPECT_EQ(r.code, 2);
}

TEST(ProbeCli, QuickDecodeRunSavesALoadableProfile) {
  ScratchDir dir;
  const std::string saved = dir.file("p.json");
  auto r = run_cli({"probe", "--quick", "--parts", "decode", "--threads", "2", "--save", saved});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("images/s per core"), std::string::npos) << r.out;
  r = run_cli({"probe", "--load", saved, "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["decode"]["jpeg_per_core_images_per_s"].get<double>(), 0);
  EXPECT_GT(j["discovery"]["cores"].get<int>(), 0);
}

TEST(ProbeMeasure, MemoryBandwidthIsPositiveAndFinite) {
  const HwlocTopology topo;
  MemoryOptions o;
  o.array_size = Bytes(16.0 * 1048576);
  o.repetitions = 3;
  const auto results = measure_memory(o, topo);
  ASSERT_FALSE(results.empty());
  for (const auto& m : results) {
    EXPECT_TRUE(std::isfinite(m.copy.value()));
    EXPECT_TRUE(std::isfinite(m.triad.value()));
    EXPECT_GT(m.copy.value(), 0);
    EXPECT_GT(m.triad.value(), 0);
    EXPECT_GE(m.threads, 1);
  }
}

TEST(ProbeMeasure, StreamArraySizeFollowsStreamsRuleWithinMemory) {
  const double MiB = 1048576;
  EXPECT_DOUBLE_EQ(stream_array_size(Bytes(32 * MiB), Bytes(64e9)).value(), 256 * MiB);
  EXPECT_DOUBLE_EQ(stream_array_size(Bytes(480 * MiB), Bytes(64e9)).value(), 1920 * MiB);
  EXPECT_LE(stream_array_size(Bytes(480 * MiB), Bytes(1.2e9)).value(), 1.2e9 / 6);
}

TEST(ProbeMeasure, StorageRemovesItsFileAndRejectsBadDirectories) {
  ScratchDir dir;
  StorageOptions o;
  o.directory = dir.path().string();
  o.file_size = Bytes(4.0 * 1048576);
  const auto r = measure_storage(o);
  EXPECT_GT(r.read.value(), 0);
  EXPECT_GT(r.write.value(), 0);
  EXPECT_DOUBLE_EQ(r.file_size.value(), 4.0 * 1048576);
  EXPECT_TRUE(r.direct_io ? r.note.find("O_DIRECT,") == 0 : r.note.find("O_DIRECT unsupported, page-cache read") == 0)
      << r.note;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the temporary file is gone";
  o.directory = dir.file("no-such-dir");
  EXPECT_THROW((void)measure_storage(o), InputError);
}

TEST(ProbeMeasure, TempFileIsRemovedWhenSigtermArrives) {
  ScratchDir dir;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TempFile f(dir.path().string());
    std::raise(SIGTERM);
    _exit(0);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(fs::is_empty(dir.path())) << "the handler unlinked the file";
}

TEST(ProbeMeasure, DecodesARealJpeg) {
  const auto jpeg = synthetic_jpeg(500, 375, 90);
  ASSERT_GT(jpeg.size(), 1000u);
  EXPECT_EQ(jpeg[0], 0xFF);
  EXPECT_EQ(jpeg[1], 0xD8);  // SOI marker
  int w = 0, h = 0;
  const auto rgb = decode_jpeg(jpeg, w, h);
  EXPECT_EQ(w, 500);
  EXPECT_EQ(h, 375);
  EXPECT_EQ(rgb.size(), 500u * 375u * 3u);
  auto corrupt = jpeg;
  corrupt.resize(100);
  EXPECT_THROW((void)decode_jpeg(corrupt, w, h), std::runtime_error);
  DecodeOptions o;
  o.threads = 2;
  o.duration = seconds(0.05);
  const auto d = measure_decode(o);
  EXPECT_GT(d.jpeg_per_core.value(), 0);
  EXPECT_GT(d.jpeg_all_cores.value(), 0);
  EXPECT_GT(d.inflate_per_core.value(), 0);
  EXPECT_GT(d.deflate_ratio, 1.0);
}

TEST(ProbeFormulas, BusBandwidthAndMpiPartners) {
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
  EXPECT_EQ(mpi_partner(0, 2), 1);
  EXPECT_EQ(mpi_partner(1, 2), 0);
  EXPECT_EQ(mpi_partner(1, 8), 5);
  EXPECT_EQ(mpi_partner(6, 8), 2);
  EXPECT_EQ(mpi_partner(2, 3), -1);
}

TEST(ProbeMpi, WithoutMpiTheFlagIsAClearError) {
  if (mpi_built()) GTEST_SKIP() << "built with MPI: tests/mpi_probe_test.cmake runs it under mpirun";
  const auto r = run_cli({"probe", "--mpi", "--quick"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("built without MPI"), std::string::npos) << r.err;
}

TEST(ProbeGpu, WithoutAGpuSaysSo) {
  // On a machine with a GPU this measures it; without one the notes say so and nothing is invented.
  GpuProbeOptions o;
  o.quick = true;
  const auto r = measure_gpus(o);
  if (r.copies.empty()) {
    ASSERT_FALSE(r.notes.empty());
    EXPECT_TRUE(r.notes[0].find("no GPU found") == 0 || r.notes[0].find("GPU probes not built") == 0) << r.notes[0];
    EXPECT_FALSE(r.nccl);
  }
}

}  // namespace
}  // namespace gf
