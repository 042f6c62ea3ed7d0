// Machine-readable output (issue 36, item 4): `catalog --format json` holds every section the
// table shows, `collective --format json` the communicator, the average bus bandwidth, the
// warnings and the version, and CSV outputs open with their warnings and notes as comment lines
// that a reader skipping comments (pandas.read_csv(comment='#')) passes over.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/csv.hpp"
#include "core/messages.hpp"
#include "core/version.hpp"
#include "plan/planner.hpp"
#include "test_support.hpp"

namespace gf {
namespace {

using test::run_cli;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The catalog table's rows per section: a section is a "Title:" line, its column header, then
// rows indented by one space, up to a blank line. Each row as its first cell (the name) and its
// second (the kind, in the last section).
std::map<std::string, std::vector<std::pair<std::string, std::string>>> table_sections(const std::string& text) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
  std::string section;
  bool header = false;
  static const std::regex cells(R"(^ (\S+(?: \S+)*?)  +(\S+(?: \S+)*?)(?:  |$))");
  for (const auto& line : lines_of(text)) {
    if (line.empty()) continue;
    if (line.front() != ' ') {
      section = line.substr(0, line.size() - 1);  // "GPUs:" -> "GPUs"
      header = true;
      continue;
    }
    if (header) {  // the column names
      header = false;
      continue;
    }
    std::smatch m;
    EXPECT_TRUE(std::regex_search(line, m, cells)) << line;
    out[section].emplace_back(m[1].str(), m[2].str());
  }
  return out;
}

std::vector<std::string> names(const nlohmann::json& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.at("name").get<std::string>());
  return out;
}

TEST(CatalogJson, HoldsEverySectionOfTheTableEachEntryWithItsSource) {
  const auto text = run_cli({"catalog"});
  const auto json = run_cli({"catalog", "--format", "json"});
  ASSERT_EQ(text.code, 0) << text.err;
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  const auto sections = table_sections(text.out);
  ASSERT_EQ(sections.size(), 4u) << text.out.substr(0, 2000);

  // Each table's rows, by name, are the JSON entries of its sections, in the same order.
  auto first_cells = [&](const std::string& section) {
    std::vector<std::string> out;
    for (const auto& [name, kind] : sections.at(section)) out.push_back(name);
    return out;
  };
  EXPECT_EQ(first_cells("GPUs"), names(j.at("gpus")));
  EXPECT_EQ(first_cells("Networks"), names(j.at("networks")));
  // The Links table: PCIe generations, then NVLink generations ("PCIe Gen4", "NVLink 4").
  EXPECT_EQ(first_cells("Links"), names(j.at("links")));
  EXPECT_EQ(j.at("links").size(),
            test::catalog().pcie_generations().size() + test::catalog().nvlink_generations().size());
  // The last table holds four kinds: NICs, switches, storage (its kind: nvme, hdd, ...), CPUs.
  const auto& rest = sections.at("NICs, switches, storage, CPUs");
  std::map<std::string, std::size_t> by_kind;
  for (const auto& [name, kind] : rest)
    ++by_kind[kind == "NIC" || kind == "switch" || kind == "CPU" ? kind : "storage"];
  EXPECT_EQ(by_kind["NIC"], j.at("nics").size());
  EXPECT_EQ(by_kind["switch"], j.at("switches").size());
  EXPECT_EQ(by_kind["storage"], j.at("storage").size());
  EXPECT_EQ(by_kind["CPU"], j.at("cpus").size());
  EXPECT_EQ(rest.size(), j.at("nics").size() + j.at("switches").size() + j.at("storage").size() + j.at("cpus").size());
  // And each section is the whole catalog's, not an excerpt.
  EXPECT_EQ(j.at("gpus").size(), test::catalog().gpus().size());
  EXPECT_EQ(j.at("cpus").size(), test::catalog().cpus().size());
  EXPECT_EQ(j.at("storage").size(), test::catalog().storages().size());

  for (const char* section : {"gpus", "networks", "links", "nics", "switches", "storage", "cpus"}) {
    ASSERT_FALSE(j.at(section).empty()) << section;
    for (const auto& e : j.at(section)) {
      EXPECT_FALSE(e.at("name").get<std::string>().empty()) << section;
      EXPECT_FALSE(e.at("source").get<std::string>().empty()) << section << " " << e.at("name");
    }
  }
  // Figures carry their unit in the key, as the table's columns do.
  EXPECT_TRUE(j.at("gpus").at(0).contains("tdp_W"));
  EXPECT_TRUE(j.at("switches").at(0).contains("port_rate_Gbps"));
  EXPECT_TRUE(j.at("cpus").at(0).contains("memory_bandwidth_GBps"));
}

TEST(CatalogJson, KeepsTheKeysItHadAndAddsTheEntriesFields) {
  const auto j = nlohmann::json::parse(run_cli({"catalog", "--format", "json"}).out);
  for (const auto& g : j.at("gpus")) {
    for (const char* key : {"name", "memory_GB", "memory_MiB", "memory_MiB_estimate", "memory_MiB_source",
                            "memory_bandwidth_GBps", "tflops_dense", "tdp_W", "source"})
      EXPECT_TRUE(g.contains(key)) << key;
  }
  for (const auto& n : j.at("networks")) {
    for (const char* key : {"name", "family", "data_rate_Gbps", "efficiency", "source"})
      EXPECT_TRUE(n.contains(key)) << key;
  }
  // A field the text does not show: the network's vendor NCCL profile, with its citation.
  const auto& tcpx = *std::find_if(j.at("networks").begin(), j.at("networks").end(),
                                   [](const nlohmann::json& n) { return n.at("name") == "gcp-tcpx"; });
  EXPECT_EQ(tcpx.at("nccl_env").at("NCCL_PROTO"), "Simple");
  EXPECT_FALSE(tcpx.at("nccl_env_source").get<std::string>().empty());
  // The H100 SXM5's NVLink ports and MIG, as the table's NVLink and MIG columns show them.
  const auto& gpus = j.at("gpus");
  const auto& h100 =
      *std::find_if(gpus.begin(), gpus.end(), [](const nlohmann::json& g) { return g.at("name") == "h100-sxm5"; });
  EXPECT_EQ(h100.at("scale_up").at("generation"), 4);
  EXPECT_EQ(h100.at("scale_up").at("links"), 18);
  EXPECT_EQ(h100.at("mig_max_instances"), 7);
  EXPECT_EQ(h100.at("pcie").at("generation"), 5);
}

// `collective` on a PCIe preset whose NICs a --network override leaves capped by their PCIe path:
// the run warns.
const std::vector<std::string> kCappedPcie = {"collective", "all_reduce", "--preset", "pcie-8x-a100", "--nodes", "2",
                                              "--network",  "ib-ndr",     "-b",       "1M",           "-e",      "64M",
                                              "-f",         "8"};

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> extra) {
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CollectiveJson, CarriesTheCommunicatorTheAverageTheWarningsAndTheVersion) {
  const auto r = run_cli(with(kCappedPcie, {"--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);

  const auto& c = j.at("comm");
  EXPECT_EQ(c.at("ranks"), 16);
  EXPECT_EQ(c.at("nodes"), 2);
  EXPECT_EQ(c.at("gpus_per_node"), 8);
  EXPECT_EQ(c.at("ranks_per_node"), 8);
  EXPECT_EQ(c.at("gpu"), "a100-pcie-80gb");
  EXPECT_EQ(c.at("gpu_fabric"), "pcie");
  EXPECT_EQ(c.at("network"), "ib-ndr");
  EXPECT_EQ(c.at("fabric"), "single");
  EXPECT_EQ(c.at("nics"), nlohmann::json::array({"connectx-7"}));
  topo::ClusterOverrides o;
  o.nodes = 2;
  o.network = "ib-ndr";
  EXPECT_EQ(c.at("nics_per_node"), test::preset("pcie-8x-a100", o).node().nics());
  EXPECT_TRUE(c.at("nccl_env").is_object());
  ASSERT_FALSE(c.at("transports").empty());
  EXPECT_EQ(c.at("transports"), j.at("transports"));  // the key it had, kept
  EXPECT_EQ(c.at("description"), j.at("communicator"));

  // The average bus bandwidth is nccl-tests': the mean of the rows' busbw, as the table prints it.
  const auto& rows = j.at("rows");
  ASSERT_EQ(rows.size(), 3u);
  double sum = 0;
  for (const auto& row : rows) {
    sum += row.at("busbw_GBps").get<double>();
    for (const char* key : {"size_bytes", "count", "type", "redop", "root", "time_us", "algbw_GBps", "busbw_GBps",
                            "algorithm", "protocol", "channels"})
      EXPECT_TRUE(row.contains(key)) << key;
    for (const char* key : {"low", "high", "class", "rows"}) EXPECT_TRUE(row.at("time_band_us").contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(j.at("avg_busbw_GBps").get<double>(), sum / 3);
  const auto table = run_cli(kCappedPcie);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(table.out, m, std::regex(R"(# Avg bus bandwidth    : ([0-9.]+))"))) << table.out;
  EXPECT_NEAR(std::stod(m[1].str()), sum / 3, 5e-5);

  // Warnings apart from notes, without their "warning: " mark: the capped NIC, the NIC swap.
  const auto& warnings = j.at("warnings");
  auto has = [](const nlohmann::json& list, const std::string& part) {
    for (const auto& s : list)
      if (s.get<std::string>().find(part) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has(warnings, "PCIe path carries")) << warnings;
  EXPECT_TRUE(has(warnings, "replaced by connectx-7")) << warnings;
  EXPECT_FALSE(has(j.at("notes"), "PCIe path carries")) << j.at("notes");
  for (const auto& list : {warnings, j.at("notes")})
    for (const auto& s : list) EXPECT_FALSE(s.get<std::string>().starts_with("warning: ")) << s;
  EXPECT_TRUE(has(j.at("notes"), "fabric: one quantum-2 switch")) << j.at("notes");

  // The version of the build, the one the planner's results store records too (set apart).
  EXPECT_EQ(j.at("gpufabric_version"), kGpufabricVersion);
  EXPECT_TRUE(plan::model_version().starts_with(std::string("gpufabric ") + kGpufabricVersion + " "))
      << plan::model_version();
}

TEST(CollectiveJson, TheNcclEnvironmentIsAMapOfWhatWasApplied) {
  // GCP TCPX's vendor profile under the user's own --env, which wins where both set a variable.
  const auto r =
      run_cli({"collective", "all_gather", "--preset", "dgx-h100", "--nodes", "2", "--network", "gcp-tcpx", "--env",
               "NCCL_MAX_NCHANNELS=8", "--env", "NCCL_PROTO=Simple", "-b", "1M", "-e", "1M", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto env = nlohmann::json::parse(r.out).at("comm").at("nccl_env");
  EXPECT_EQ(env.at("NCCL_MAX_NCHANNELS"), "8");
  EXPECT_EQ(env.at("NCCL_PROTO"), "Simple");
  EXPECT_EQ(env.at("NCCL_ALGO"), "Ring");          // from the network's profile
  EXPECT_EQ(env.at("NCCL_NVLS_ENABLE"), "0");      // likewise
  EXPECT_EQ(env.at("NCCL_SOCKET_NTHREADS"), "1");  // likewise
  // One node runs under no network profile: only what the user set.
  const auto one = run_cli({"collective", "all_gather", "--preset", "dgx-h100", "--env", "NCCL_MAX_NCHANNELS=8", "-b",
                            "1M", "-e", "1M", "--format", "json"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out).at("comm").at("nccl_env"), nlohmann::json({{"NCCL_MAX_NCHANNELS", "8"}}));
}

// ---- CSV ----

// A CSV as pandas.read_csv(text, comment='#') reads it: lines starting with '#' dropped, then
// records of RFC 4180 fields. A '#' outside quotes would end the record there (pandas drops the
// rest of the line), so it fails the parse here.
struct ParsedCsv {
  std::vector<std::string> comments;
  std::vector<std::vector<std::string>> records;  // the header first
};

::testing::AssertionResult parse_csv(const std::string& text, ParsedCsv& out) {
  bool data_started = false;
  for (const auto& line : lines_of(text)) {
    if (line.starts_with("#")) {
      if (data_started) return ::testing::AssertionFailure() << "a comment line after the header: " << line;
      out.comments.push_back(line);
      continue;
    }
    data_started = true;
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
          fields.back() += '"';
          ++i;
        } else if (c == '"') {
          quoted = false;
        } else {
          fields.back() += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        fields.emplace_back();
      } else if (c == '#') {
        return ::testing::AssertionFailure() << "an unquoted '#' would start a comment: " << line;
      } else {
        fields.back() += c;
      }
    }
    if (quoted) return ::testing::AssertionFailure() << "a quote left open: " << line;
    out.records.push_back(fields);
  }
  if (out.records.empty()) return ::testing::AssertionFailure() << "no header";
  for (const auto& r : out.records) {
    if (r.size() != out.records.front().size())
      return ::testing::AssertionFailure() << r.size() << " fields where the header has " << out.records.front().size();
  }
  for (const auto& c : out.comments) {
    if (!c.starts_with("# warning: ") && !c.starts_with("# note: "))
      return ::testing::AssertionFailure() << "neither a warning nor a note: " << c;
  }
  return ::testing::AssertionSuccess();
}

TEST(CsvOutput, ScheduleCarriesTheClustersNotesAsCommentLines) {
  // An oversubscribed fat-tree: the topology notes which tiers it chose; the CSV must say so too.
  const auto csv =
      run_cli({"schedule", "--trace", std::string(GPUFABRIC_SOURCE_DIR) + "/data/traces/examples/training-mix.csv",
               "--preset", "dgx-h100", "--nodes", "24", "--fabric", "fat-tree", "--oversubscription", "7", "--policy",
               "first-fit", "--quiet", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  ParsedCsv p;
  ASSERT_TRUE(parse_csv(csv.out, p)) << csv.out;
  ASSERT_FALSE(p.comments.empty()) << csv.out;
  bool tiers = false;
  for (const auto& c : p.comments) tiers = tiers || c.find("tiers") != std::string::npos;
  EXPECT_TRUE(tiers) << csv.out;
  EXPECT_GT(p.records.size(), 1u);
}

TEST(CsvOutput, CollectiveWarningsAndNotesComeFirstAsCommentLines) {
  const auto csv = run_cli(with(kCappedPcie, {"--format", "csv"}));
  const auto json = run_cli(with(kCappedPcie, {"--format", "json"}));
  ASSERT_EQ(csv.code, 0) << csv.err;
  ParsedCsv p;
  ASSERT_TRUE(parse_csv(csv.out, p)) << csv.out;
  const auto j = nlohmann::json::parse(json.out);
  // The same warnings and notes as the JSON, in the same order, warnings first.
  std::vector<std::string> expected;
  for (const auto& w : j.at("warnings")) expected.push_back("# warning: " + w.get<std::string>());
  for (const auto& n : j.at("notes")) expected.push_back("# note: " + n.get<std::string>());
  EXPECT_EQ(p.comments, expected);
  EXPECT_FALSE(j.at("warnings").empty());
  EXPECT_EQ(p.records.front().front(), "size_bytes");
  EXPECT_EQ(p.records.size() - 1, j.at("rows").size());
}

TEST(CsvOutput, ValidationCsvParsesWithItsFootnotesAsComments) {
  const auto r = run_cli({"validate", "--suite", "collectives", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  ParsedCsv p;
  ASSERT_TRUE(parse_csv(r.out, p)) << r.out.substr(0, 3000);
  const auto j = nlohmann::json::parse(run_cli({"validate", "--suite", "collectives", "--format", "json"}).out);
  EXPECT_EQ(p.records.size() - 1, j.at("rows").size());
  // Every excluded row says why, as the table's footnotes do, and is marked in its own column.
  std::size_t excluded = 0;
  for (const auto& row : j.at("rows")) excluded += row.at("excluded").get<std::string>().empty() ? 0 : 1;
  ASSERT_GT(excluded, 0u);
  std::size_t said = 0;
  for (const auto& c : p.comments) said += c.starts_with("# note: excluded ") ? 1 : 0;
  EXPECT_EQ(said, excluded);
  const auto& header = p.records.front();
  const auto column = std::find(header.begin(), header.end(), "excluded") - header.begin();
  ASSERT_LT(static_cast<std::size_t>(column), header.size());
  std::size_t marked = 0;
  for (std::size_t i = 1; i < p.records.size(); ++i) marked += p.records[i][static_cast<std::size_t>(column)] == "true";
  EXPECT_EQ(marked, excluded);
  // Paths: sources that hold a '#' (GitHub issue numbers) are quoted, so the rows stay whole.
  const auto paths = run_cli({"validate", "--suite", "paths", "--format", "csv"});
  ParsedCsv q;
  EXPECT_TRUE(parse_csv(paths.out, q)) << paths.out.substr(0, 3000);
}

TEST(CsvOutput, FieldsAndCommentLines) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("NVIDIA/nccl issue #1411"), "\"NVIDIA/nccl issue #1411\"");
  EXPECT_EQ(csv_field("a, \"b\""), "\"a, \"\"b\"\"\"");
  Messages m;
  m.add("warning: capped");
  m.add("fabric: one switch");
  m.add_warning("capped");  // the same warning again (a footnote every row shares): listed once
  m.add_warning("two\nlines");
  EXPECT_EQ(m.warnings, (std::vector<std::string>{"capped", "two\nlines"}));
  EXPECT_EQ(m.notes, (std::vector<std::string>{"fabric: one switch"}));
  EXPECT_EQ(csv_comment_lines(m), "# warning: capped\n# warning: two lines\n# note: fabric: one switch\n");
}

}  // namespace
}  // namespace gf
