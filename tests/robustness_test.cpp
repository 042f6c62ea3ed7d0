// Bad input gets a clear error (exit 2, the file, line and field), never a crash, an internal
// error or a plausible-looking nonsense result; and the bookkeeping that miscounted multi-tier
// fabrics. Each case here was found by fuzzing or by hand (issue 10, items 7 and 8).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>

#include "comm/nccl_params.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "probe/memory_bandwidth.hpp"
#include "probe/profile_json.hpp"
#include "report/table.hpp"
#include "scratch_dir.hpp"
#include "test_support.hpp"
#include "topo/summary.hpp"
#include "validate/collective_validation.hpp"
#include "validate/path_validation.hpp"
#include "work/input_workload.hpp"

namespace gf {
namespace {

namespace fs = std::filesystem;
using test::catalog;
using test::input_error;
using test::run_cli;

std::string embedded(const std::string& path) {
  if (const auto text = data::find(path)) return std::string(*text);
  ADD_FAILURE() << "no embedded file " << path;
  return {};
}

// `text` with the first line that starts (after indentation) with `key:` replaced by `key: value`.
std::string with_value(std::string text, const std::string& key, const std::string& value, std::size_t from = 0) {
  const std::regex re("(\\n[ \\t]*(- )?)" + key + ":[^\\n]*");
  std::smatch m;
  const std::string tail = text.substr(from);
  if (!std::regex_search(tail, m, re)) {
    ADD_FAILURE() << "no key " << key;
    return text;
  }
  const std::size_t at = from + static_cast<std::size_t>(m.position(0));
  text.replace(at, static_cast<std::size_t>(m.length(0)), m[1].str() + key + ": " + value);
  return text;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------- item 7: bookkeeping

TEST(Bookkeeping, MultiTierFabricCountsEveryDeviceAndLinkOnce) {
  topo::ClusterOverrides o;
  o.nodes = 16;
  o.fabric = topo::FabricKind::fat_tree;
  const auto t = test::preset("dgx-h100", o);
  const auto s = topo::summarize(t);
  // Counted here independently of the summary, straight from the graph.
  std::size_t gpus = 0, planes = 0, bundles = 0, network = 0;
  for (const auto& d : t.graph().devices()) {
    gpus += d.kind == topo::DeviceKind::gpu;
    planes += d.kind == topo::DeviceKind::fabric_plane;
  }
  for (const auto& l : t.graph().links()) {
    bundles += l.kind == topo::LinkKind::bundle;
    network += l.kind == topo::LinkKind::network;
  }
  EXPECT_EQ(gpus, 128U);
  EXPECT_EQ(s.devices_by_kind[topo::DeviceKind::gpu], 128U);
  EXPECT_EQ(s.devices_by_kind[topo::DeviceKind::fabric_plane], planes);
  EXPECT_EQ(s.links_by_kind[topo::LinkKind::bundle], bundles);
  EXPECT_EQ(s.links_by_kind[topo::LinkKind::network], network);
  EXPECT_GT(bundles, 0U) << "a two-tier fabric should have ECMP bundles";
  EXPECT_EQ(s.devices, t.graph().device_count() - planes);
  EXPECT_EQ(s.links, t.graph().link_count() - bundles);
  std::size_t by_kind = 0;
  for (auto k : {topo::LinkKind::nvlink, topo::LinkKind::pcie, topo::LinkKind::socket, topo::LinkKind::memory,
                 topo::LinkKind::network}) {
    by_kind += s.links_by_kind[k];
  }
  EXPECT_EQ(by_kind, s.links) << "every hardware link has exactly one kind";

  const auto r = run_cli({"topo", "--preset", "dgx-h100", "--nodes", "16", "--fabric", "fat-tree"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(128 GPU, ")) << r.out;
  EXPECT_TRUE(contains(r.out, "links (duplex)      " + std::to_string(s.links / 2) + " (")) << r.out;
}

TEST(Bookkeeping, OversubscriptionSaysWhatWasBuiltAndWhatWasAsked) {
  const auto r =
      run_cli({"topo", "--preset", "dgx-h100", "--nodes", "16", "--fabric", "fat-tree", "--oversubscription", "8"});
  ASSERT_EQ(r.code, 0) << r.err;
  // A 64-port leaf cannot split 8:1; what it builds is said beside what was asked.
  EXPECT_TRUE(contains(r.out, "8:1 requested")) << r.out;
  const auto exact =
      run_cli({"topo", "--preset", "dgx-h100", "--nodes", "16", "--fabric", "fat-tree", "--oversubscription", "3"});
  ASSERT_EQ(exact.code, 0) << exact.err;
  EXPECT_TRUE(contains(exact.out, "oversubscription 3:1")) << exact.out;
  EXPECT_FALSE(contains(exact.out, "requested")) << exact.out;
}

TEST(Bookkeeping, GpuDirectOffStagesTheNicPathThroughHostMemory) {
  const auto on = run_cli({"topo", "--preset", "dgx-h100", "--nodes", "2", "--format", "json"});
  const auto off = run_cli({"topo", "--preset", "dgx-h100", "--nodes", "2", "--gpudirect", "off", "--format", "json"});
  ASSERT_EQ(on.code, 0) << on.err;
  ASSERT_EQ(off.code, 0) << off.err;
  const auto jon = nlohmann::json::parse(on.out);
  const auto joff = nlohmann::json::parse(off.out);
  bool compared = false;
  for (std::size_t i = 0; i < jon["gpu_nic"].size(); ++i) {
    if (!jon["gpu_nic"][i]["nearest"].get<bool>()) continue;
    EXPECT_EQ(jon["gpu_nic"][i]["transport"], "gpudirect-rdma");
    EXPECT_EQ(joff["gpu_nic"][i]["transport"], "host-bounce");
    // Staged: GPU -> memory and memory -> NIC, so never faster and always later than direct.
    EXPECT_LE(joff["gpu_nic"][i]["bandwidth_GBps"].get<double>(), jon["gpu_nic"][i]["bandwidth_GBps"].get<double>());
    EXPECT_GT(joff["gpu_nic"][i]["latency_us"].get<double>(), jon["gpu_nic"][i]["latency_us"].get<double>());
    compared = true;
  }
  EXPECT_TRUE(compared);
  const auto text = run_cli({"topo", "--preset", "dgx-h100", "--nodes", "2", "--gpudirect", "off"});
  EXPECT_TRUE(contains(text.out, "GPUDirect RDMA is off, so data is staged through host memory")) << text.out;
  EXPECT_TRUE(contains(text.out, "host-bounce")) << text.out;
}

TEST(Bookkeeping, PipelineTableHasNoBillionsOfSamples) {
  const auto r = run_cli({"pipeline", "--preset", "dgx-a100", "--input", "resnet50-imagenet"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Not "6532.7G": a stage beyond a billion samples/s is said to be so, not given digits to trust.
  EXPECT_FALSE(std::regex_search(r.out, std::regex("[0-9]\\.[0-9]G"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("D2H copy +PCIe +> 1G"))) << r.out;
}

TEST(Bookkeeping, HumanDurations) {
  EXPECT_EQ(report::human_duration(850e-9), "850 ns");
  EXPECT_EQ(report::human_duration(12.5e-6), "12.5 us");
  EXPECT_EQ(report::human_duration(3.2e-3), "3.20 ms");
  EXPECT_EQ(report::human_duration(4.75), "4.75 s");
  EXPECT_EQ(report::human_duration(3 * 3600.0), "3.00 h");
  EXPECT_EQ(report::human_duration(90.0), "1.50 min");
  EXPECT_EQ(report::human_duration(10 * 86400.0), "10.0 days");
}

// ---------------------------------------------------------------- item 8: probe profiles

// A minimal profile with two GPUs and one peer copy, as probe --save writes it.
nlohmann::json two_gpu_profile() {
  probe::Profile p;
  p.gpufabric_version = "test";
  p.measured_at = "2026-01-01T00:00:00Z";
  for (int i = 0; i < 2; ++i) {
    probe::GpuInfo g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_address = "0000:1" + std::to_string(8 + i) + ":00.0";
    p.discovery.gpus.push_back(g);
  }
  probe::GpuResults g;
  g.peers = {{0, 1, true, gigabytes_per_second(370)}};
  p.gpu = g;
  return probe::profile_to_json(p);
}

TEST(BadProbeProfile, PeerIndexOutsideTheProfilesGpusIsAnError) {
  EXPECT_NO_THROW((void)probe::profile_from_json(two_gpu_profile().dump(), "p.json"));
  auto j = two_gpu_profile();
  j["gpu"]["peers"][0]["src"] = 20000;
  const std::string msg = input_error([&] { (void)probe::profile_from_json(j.dump(), "p.json"); });
  EXPECT_TRUE(contains(msg, "p.json")) << msg;
  EXPECT_TRUE(contains(msg, "gpu.peers[0].src")) << msg;
  EXPECT_TRUE(contains(msg, "0 to 1")) << msg;

  const test::ScratchDir dir;
  const auto file = dir.write("big.json", j.dump(2));
  const auto r = run_cli({"probe", "--load", file});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(contains(r.err, "gpu.peers[0].src")) << r.err;
}

TEST(BadProbeProfile, SixtyFourBitValuesAreReportedAsWritten) {
  auto j = two_gpu_profile();
  j["discovery"]["cores"] = std::numeric_limits<std::uint64_t>::max();
  const std::string msg = input_error([&] { (void)probe::profile_from_json(j.dump(), "p.json"); });
  EXPECT_TRUE(contains(msg, "18446744073709551615")) << msg;
  EXPECT_FALSE(contains(msg, "got -1")) << msg;
  EXPECT_TRUE(contains(msg, "discovery.cores")) << msg;
}

TEST(BadProbeProfile, ANumberBeyondADoubleIsAnInputError) {
  // Found by fuzzing: valid JSON syntax that nlohmann cannot hold threw out_of_range (exit 1).
  std::string text = two_gpu_profile().dump();
  const std::string key = "\"memory_bytes\":";
  const auto at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  const auto end = text.find_first_of(",}", at);
  text.replace(at + key.size(), end - at - key.size(), "1e3080");
  const std::string msg = input_error([&] { (void)probe::profile_from_json(text, "huge.json"); });
  EXPECT_TRUE(contains(msg, "huge.json")) << msg;
  EXPECT_TRUE(contains(msg, "1e3080")) << msg;
}

TEST(BadProbeProfile, StreamArraysTogetherTakeASixthOfAvailableMemory) {
  const double available = 24e9;
  const double per_array = probe::stream_array_size(Bytes(4e9), Bytes(available)).value();
  EXPECT_LE(3 * per_array, available / 6);
  EXPECT_GT(3 * per_array, available / 6 * 0.9);  // the bound is used, not undercut
}

TEST(BadProbeProfile, EmptyLoadOrSaveIsRefusedAndSaveIsCheckedFirst) {
  auto r = run_cli({"probe", "--load", ""});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "--load")) << r.err;
  r = run_cli({"probe", "--save", ""});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "--save")) << r.err;
  // An unwritable --save fails before anything else is looked at (here, before --parts, which is
  // read before measuring starts), and leaves nothing behind.
  const test::ScratchDir dir;
  const std::string nowhere = (dir.path() / "no-such-dir" / "p.json").string();
  r = run_cli({"probe", "--save", nowhere, "--parts", "nonsense"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "--save")) << r.err;
  EXPECT_TRUE(contains(r.err, "No such file or directory")) << r.err;
  const std::string good = dir.file("p.json");
  r = run_cli({"probe", "--save", good, "--parts", "nonsense"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "--parts")) << r.err;
  EXPECT_FALSE(fs::exists(good)) << "the writability check must not leave a file";
}

// ---------------------------------------------------------------- item 8: every YAML reader

// The readers, each given a whole text and a file name.
struct Reader {
  const char* name;
  std::string base;  // a valid input
  std::function<void(const std::string&, const std::string&)> read;
};

std::vector<Reader> yaml_readers() {
  return {
      {"catalog", embedded("data/catalog/links.yaml"),
       [](const std::string& text, const std::string& file) {
         hw::Catalog c;
         c.load_text(text, file);
       }},
      {"cluster", embedded("data/presets/dgx-h100.yaml"),
       [](const std::string& text, const std::string& file) { (void)topo::parse_cluster(text, file, catalog()); }},
      {"workload", embedded("data/workloads/resnet50-imagenet.yaml"),
       [](const std::string& text, const std::string& file) { (void)work::parse_workload(text, file); }},
      {"path validation", embedded("data/validation/topo_paths.yaml"),
       [](const std::string& text, const std::string& file) { (void)validate::parse_path_rows(text, file); }},
      {"collective validation", embedded("data/validation/collectives.yaml"),
       [](const std::string& text, const std::string& file) { (void)validate::parse_collective_rows(text, file); }},
      {"nccl params", embedded("data/comm/nccl.yaml"),
       [](const std::string& text, const std::string& file) { (void)comm::parse_nccl_params(text, file); }},
  };
}

// The error reading `text` raises; a test failure (and nothing) where it reads without one.
std::optional<InputError> read_error(const Reader& r, const std::string& text, const std::string& file) {
  try {
    r.read(text, file);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return std::nullopt;
}

TEST(BadYaml, NonScalarKeyIsAnInputErrorAtItsLineInEveryReader) {
  for (const auto& r : yaml_readers()) {
    SCOPED_TRACE(r.name);
    EXPECT_NO_THROW(r.read(r.base, "ok.yaml"));
    for (const std::string key : {"[a, b]", "{a: 1}"}) {
      // A new top-level key on the last line: every reader checks its top-level keys.
      std::string text = r.base;
      if (!text.ends_with("\n")) text += "\n";
      const int line = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
      text += key + ": 1\n";
      SCOPED_TRACE(key);
      const auto e = read_error(r, text, "bad.yaml");
      if (!e) continue;
      EXPECT_EQ(e->where().file, "bad.yaml");
      EXPECT_EQ(e->where().line, line) << e->what();
      EXPECT_TRUE(contains(e->what(), "key")) << e->what();
    }
  }
}

TEST(BadYaml, NonScalarKeyInANestedMappingIsAnInputError) {
  const std::string text = "rows:\n  - id: x\n    [p, q]: 1\n";
  const std::string msg = input_error([&] { (void)validate::parse_path_rows(text, "v.yaml"); });
  EXPECT_TRUE(contains(msg, "v.yaml:3")) << msg;
  EXPECT_TRUE(contains(msg, "rows[0]")) << msg;
}

TEST(BadYaml, InvalidUtf8IsRefusedAtLoadTimeWithLineAndColumn) {
  for (const auto& r : yaml_readers()) {
    SCOPED_TRACE(r.name);
    const std::string text = "# comment\n# caf\xc3\xa9 is fine, this is not: \xff\xfe\n" + r.base;
    const auto e = read_error(r, text, "latin1.yaml");
    if (!e) continue;
    EXPECT_EQ(e->where().line, 2) << e->what();
    EXPECT_EQ(e->where().column, 31) << e->what();  // in bytes, as editors' "go to byte" counts
    EXPECT_TRUE(contains(e->what(), "UTF-8")) << e->what();
  }
  EXPECT_EQ(invalid_utf8_at("plain"), std::string_view::npos);
  EXPECT_EQ(invalid_utf8_at("\xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);  // euro sign, emoji
  EXPECT_EQ(invalid_utf8_at("a\xc0\xafz"), 1U);                                         // overlong '/'
  EXPECT_EQ(invalid_utf8_at("ab\xed\xa0\x80"), 2U);                                     // surrogate
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0U);                                   // past U+10FFFF
  EXPECT_EQ(invalid_utf8_at("abc\xe2\x82"), 3U);                                        // cut short
}

TEST(BadYaml, ControlCharactersAreRefusedAtLoadTime) {
  // Found by fuzzing: a NUL byte inside a key derailed yaml-cpp into an error message that was
  // not UTF-8. YAML allows no control characters but tab and line breaks.
  for (const auto& r : yaml_readers()) {
    SCOPED_TRACE(r.name);
    std::string text = "# ok\nab";
    text += '\0';
    text += "c: 1\n" + r.base;
    const auto e = read_error(r, text, "nul.yaml");
    if (!e) continue;
    EXPECT_EQ(e->where().line, 2) << e->what();
    EXPECT_EQ(e->where().column, 3) << e->what();
    EXPECT_TRUE(contains(e->what(), "control character 0x00")) << e->what();
  }
  EXPECT_NO_THROW((void)parse_yaml("a:\tb\r\nc: d\n", "tabs.yaml"));
}

TEST(BadYaml, EscapesThatDecodeToNonUtf8BytesAreRefusedAtTheirScalar) {
  // Found by fuzzing (fuzz_validation_paths): yaml-cpp decodes "\_" (YAML's no-break space) in a
  // double-quoted scalar to the single byte 0xa0, so valid UTF-8 text gave a string that the
  // JSON report then could not write (an internal error, exit 1).
  for (const auto& r : yaml_readers()) {
    SCOPED_TRACE(r.name);
    const std::string text = "# ok\nnote: \"no\\_break\"\n" + r.base;
    const auto e = read_error(r, text, "escape.yaml");
    if (!e) continue;
    EXPECT_EQ(e->where().line, 2) << e->what();
    EXPECT_EQ(e->where().column, 7) << e->what();
    EXPECT_TRUE(contains(e->what(), "UTF-8")) << e->what();
  }
  EXPECT_NO_THROW((void)parse_yaml("a: \"caf\xc3\xa9 \\u00e9\"\n", "ok.yaml"));  // UTF-8 and \u escapes are fine
}

TEST(BadYaml, InvalidUtf8ThroughTheCommandLineIsExitTwo) {
  const test::ScratchDir dir;
  const auto file =
      dir.write("w.yaml", with_value(embedded("data/workloads/resnet50-imagenet.yaml"), "name", "\"resnet\xe9\""));
  const auto r = run_cli({"pipeline", "--preset", "dgx-a100", "--input", file, "--format", "json"});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(contains(r.err, "w.yaml:")) << r.err;
  EXPECT_TRUE(contains(r.err, "UTF-8")) << r.err;
}

TEST(BadYaml, FileNameTooLongIsExitTwo) {
  const std::string longname(5000, 'x');
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"pipeline", "--preset", "dgx-a100", "--input", longname},
        std::vector<std::string>{"pipeline", "--preset", "dgx-a100", "--input", longname + ".yaml"},
        std::vector<std::string>{"validate", "--suite", "paths", "--file", longname + ".yaml"},
        std::vector<std::string>{"probe", "--load", longname + ".json"},
        std::vector<std::string>{"catalog", "--catalog", longname}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, kExitBadInput) << args[0] << ": " << r.err;
    EXPECT_FALSE(contains(r.err, "internal error")) << r.err;
  }
  const std::string msg = input_error([&] { (void)read_text_file(longname + ".yaml", "--file"); });
  EXPECT_TRUE(contains(msg, "File name too long")) << msg;
}

// ---------------------------------------------------------------- item 8: nonsense that passed

TEST(BadFigures, AbsurdCatalogFiguresAreRefusedAfterUnitConversion) {
  const std::string links = embedded("data/catalog/links.yaml");
  const auto gen5 = links.find("- generation: 5");
  ASSERT_NE(gen5, std::string::npos);
  for (const std::string v : {"1e300", "1e-300"}) {
    const std::string text = with_value(links, "lane_GBps", v, gen5);
    hw::Catalog c;
    const std::string msg = input_error([&] { c.load_text(text, "links.yaml"); });
    EXPECT_TRUE(contains(msg, "links.yaml:")) << msg;
    EXPECT_TRUE(contains(msg, "pcie[gen 5].lane_GBps")) << msg;
    EXPECT_TRUE(contains(msg, "physically sensible")) << msg;
    EXPECT_TRUE(contains(msg, v)) << msg;
  }
  // The same figure at a sensible value loads.
  hw::Catalog c;
  EXPECT_NO_THROW(c.load_text(with_value(links, "lane_GBps", "3.938", gen5), "links.yaml"));
}

TEST(BadFigures, EveryBuiltInFigureIsWithinItsRange) {
  EXPECT_NO_THROW((void)hw::Catalog::builtin());
  for (const auto& name : work::builtin_workloads()) EXPECT_NO_THROW((void)work::load_workload(name, "--input"));
  EXPECT_NO_THROW((void)validate::builtin_path_rows());
  EXPECT_NO_THROW((void)validate::builtin_collective_rows());
}

TEST(BadFigures, AbsurdWorkloadFiguresAreRefused) {
  const std::string base = embedded("data/workloads/resnet50-imagenet.yaml");
  for (const auto& kv : std::vector<std::pair<std::string, std::string>>{{"flops_per_sample", "1e-300"},
                                                                         {"flops_per_sample", "1e300"},
                                                                         {"cpu_seconds_per_sample", "1e-300"},
                                                                         {"decoded_bytes", "1e-300"},
                                                                         {"d2h_bytes_per_batch", "1e300"}}) {
    // Named copies, not a structured binding: Clang 14 (Debian 12's, the sanitizer build's
    // compiler) cannot capture a structured binding in the lambda below.
    const std::string& key = kv.first;
    const std::string& value = kv.second;
    SCOPED_TRACE(key + "=" + value);
    const std::string msg = input_error([&] { (void)work::parse_workload(with_value(base, key, value), "w.yaml"); });
    EXPECT_TRUE(contains(msg, "w.yaml:")) << msg;
    EXPECT_TRUE(contains(msg, "'" + key + "'")) << msg;
    EXPECT_TRUE(contains(msg, "physically sensible")) << msg;
  }
  // Zero stays allowed where it means "none".
  EXPECT_NO_THROW((void)work::parse_workload(with_value(base, "d2h_bytes_per_batch", "0"), "w.yaml"));
}

const char* kPathRow = R"(rows:
  - id: r1
    preset: dgx-h100
    path: gpu-gpu
    src: 0
    dst: 1
    measured_GBps: 371
    tool: p2pBandwidthLatencyTest
    source: "test"
)";

TEST(BadValidationRows, PathRowFromAGpuToItselfIsRefused) {
  const std::string text = with_value(kPathRow, "dst", "0");
  const std::string msg = input_error([&] { (void)validate::parse_path_rows(text, "v.yaml"); });
  EXPECT_TRUE(contains(msg, "v.yaml:6")) << msg;
  EXPECT_TRUE(contains(msg, "rows[0].dst")) << msg;
  const test::ScratchDir dir;
  const auto r = run_cli({"validate", "--suite", "paths", "--file", dir.write("v.yaml", text)});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(contains(r.out + r.err, "inf")) << r.out;
}

TEST(BadValidationRows, AbsurdMeasurementsAreRefused) {
  for (const std::string v : {"1e-300", "1e300"}) {
    const std::string msg =
        input_error([&] { (void)validate::parse_path_rows(with_value(kPathRow, "measured_GBps", v), "v.yaml"); });
    EXPECT_TRUE(contains(msg, "rows[0].measured_GBps")) << msg;
  }
}

TEST(BadValidationRows, ErrorsNameTheFileLineAndRowNotACommandLineFlag) {
  const test::ScratchDir dir;
  // An unknown preset in a path row.
  auto r = run_cli(
      {"validate", "--suite", "paths", "--file", dir.write("p.yaml", with_value(kPathRow, "preset", "dgx-h999"))});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "p.yaml:3")) << r.err;
  EXPECT_TRUE(contains(r.err, "rows[0].preset")) << r.err;
  EXPECT_FALSE(contains(r.err, "--preset")) << r.err;
  // A GPU the preset does not have.
  r = run_cli({"validate", "--suite", "paths", "--file", dir.write("g.yaml", with_value(kPathRow, "dst", "9"))});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "g.yaml:6")) << r.err;
  EXPECT_TRUE(contains(r.err, "rows[0].dst")) << r.err;

  const std::string coll = R"(rows:
  - id: c1
    preset: dgx-h100
    nodes: 1
    gpus: 8
    op: all_reduce
    size_bytes: 1048576
    measured_busbw_GBps: 100
    source: "test"
)";
  // Unknown preset, and more GPUs than the machine has: both name the row's keys.
  r = run_cli(
      {"validate", "--suite", "collectives", "--file", dir.write("c.yaml", with_value(coll, "preset", "nope"))});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "c.yaml:3")) << r.err;
  EXPECT_TRUE(contains(r.err, "rows[0].preset")) << r.err;
  EXPECT_FALSE(contains(r.err, "'--")) << r.err;
  r = run_cli({"validate", "--suite", "collectives", "--file", dir.write("n.yaml", with_value(coll, "gpus", "4096"))});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_TRUE(contains(r.err, "n.yaml:5")) << r.err;
  EXPECT_TRUE(contains(r.err, "rows[0].gpus")) << r.err;
  EXPECT_FALSE(contains(r.err, "'--")) << r.err;
}

}  // namespace
}  // namespace gf

namespace gf {
namespace {

// yaml-cpp quotes one byte of a multi-byte character after a backslash ("unknown escape
// character: \xe5"): the message must still be UTF-8, so it can reach JSON (found by fuzzing).
TEST(BadInput, YamlSyntaxErrorsStayValidUtf8) {
  const std::string text = "a: \"\\\xe5\x99\xa8\"\n";
  const std::string msg = gf::test::input_error([&] { (void)parse_yaml(text, "u.yaml"); });
  EXPECT_NE(msg.find("u.yaml:1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\\xe5"), std::string::npos) << msg;
  EXPECT_NO_THROW((void)nlohmann::json(msg).dump());
}

}  // namespace
}  // namespace gf
