// The HTML page for `gpufabric plan`: every chart is drawn, nothing loads from the network, every
// string from the result is escaped, the output is deterministic, and a sparse or malformed
// result still renders. Chromium checks of the same page: scripts/check-report-in-chromium.sh.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>

#include "report/plan_report.hpp"

// The suite's CMake provides GF_TEST_DATA_DIR; the older name serves when this file joins a target
// that only defines that.
#if !defined(GF_TEST_DATA_DIR) && defined(GPUFABRIC_TEST_DATA)
#define GF_TEST_DATA_DIR GPUFABRIC_TEST_DATA
#endif

using gf::report::plan_report_html;
using nlohmann::json;

namespace {

json sample() {
  const std::string path = std::string(GF_TEST_DATA_DIR) + "/plan_result_sample.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

std::size_t occurrences(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
}

// The markup of one <svg>, found by its aria-label.
std::string svg_labelled(const std::string& html, const std::string& label) {
  const auto at = html.find("aria-label=\"" + label + "\"");
  if (at == std::string::npos) return "";
  const auto begin = html.rfind("<svg", at);
  const auto end = html.find("</svg>", at);
  return html.substr(begin, end - begin);
}

// A candidate that plants markup in every string the page shows.
json hostile_candidate(const std::string& payload) {
  return {{"id", "evil" + payload},
          {"workload", "pretrain-70b"},
          {"design", payload},
          {"layout", payload},
          {"feasible", false},
          {"why_not", payload},
          {"gpus", 8},
          {"nodes", 1},
          {"preset", payload},
          {"network", payload},
          {"intra_node", payload}};
}

constexpr const char* kScriptPayload = "<script>alert(1)</script>";
constexpr const char* kAttributePayload = "\"onmouseover=\"x";
constexpr const char* kCanary =
    "<script>document.body.dataset.pwned=1</script><img src=x onerror=\"document.body.dataset.pwned=1\">";

}  // namespace

TEST(PlanReport, SampleHasEveryChart) {
  const json result = sample();
  const std::string html = plan_report_html(result);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* label : {"Pareto chart for pretrain-70b", "Pareto chart for chat", "Scaling efficiency",
                            "Step-time breakdown for pretrain-70b"}) {
    EXPECT_NE(svg_labelled(html, label), "") << label;
  }
  EXPECT_NE(html.find("aria-label=\"Topology of "), std::string::npos);
  // Serving has no training step to break down.
  EXPECT_EQ(svg_labelled(html, "Step-time breakdown for chat"), "");
  EXPECT_GE(occurrences(html, "<svg"), 5u);
  // Header: name, file, hash, model version and the counts, grouped for reading.
  for (const char* s : {"70b-pretrain-and-chat-2025q3", "plans/70b-pretrain-and-chat.yaml",
                        "3f9a6c0e1b7d42a8e5c9f01d6b3a7e24c8d19f5a0b6e3c7d2a4f8e1b9c0d5a63",
                        "gpufabric 0.9.0 (commit 664392e)", "81,234", "50,211"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  for (const json& reason : result["recommendation"]["reasons"]) {
    EXPECT_NE(html.find(reason.get<std::string>()), std::string::npos);
  }
  // The script marks the page ready for browser checks.
  EXPECT_NE(html.find("document.body.dataset.reportReady = \"1\""), std::string::npos);
}

TEST(PlanReport, TableHasEveryCandidateWithNumericSortKeys) {
  const json result = sample();
  const std::string html = plan_report_html(result);
  const auto body = html.substr(html.find("<tbody>"));
  EXPECT_EQ(occurrences(body, "<tr"), result["candidates"].size());
  const std::size_t infeasible = static_cast<std::size_t>(std::count_if(
      result["candidates"].begin(), result["candidates"].end(), [](const json& c) { return !c["feasible"]; }));
  EXPECT_EQ(occurrences(body, "<tr class=\"infeasible\">"), infeasible);
  EXPECT_NE(html.find("<th scope=\"col\" tabindex=\"0\" data-type=\"num\" class=\"num\">GPUs</th>"), std::string::npos);
  // The chosen row's cost: shown short, sorted by the exact value.
  EXPECT_NE(body.find("<td class=\"num\" data-v=\"3293000\">$3.29M</td>"), std::string::npos);
  // Infeasible rows say why.
  EXPECT_NE(body.find("activations need 83.4 GiB per GPU at mb1, a100-sxm4-80gb has 80 GiB"), std::string::npos);
}

TEST(PlanReport, LoadsNothingFromTheNetwork) {
  const std::string html = plan_report_html(sample());
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  const std::regex remote(R"re((src|href|xlink:href|action)\s*=\s*["']?\s*(https?:)?//)re", std::regex::icase);
  EXPECT_FALSE(std::regex_search(html, remote));
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  // The policy forbids fetching anything, and allows one script, by hash.
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("script-src 'sha256-"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<script"), 1u);
}

TEST(PlanReport, HeadlineIsEscaped) {
  json result = sample();
  const std::string plain = result["recommendation"]["headline"];
  EXPECT_NE(plan_report_html(result).find("<p class=\"headline\">" + plain + "</p>"), std::string::npos);
  result["recommendation"]["headline"] = "Train on <fast> & \"cheap\" 'now'";
  const std::string html = plan_report_html(result);
  EXPECT_NE(html.find("Train on &lt;fast&gt; &amp; &quot;cheap&quot; &#39;now&#39;"), std::string::npos);
  EXPECT_EQ(html.find("<fast>"), std::string::npos);
}

TEST(PlanReport, HostileStringsAppearOnlyEscaped) {
  json result = sample();
  for (const std::string& payload :
       {std::string(kScriptPayload), std::string(kAttributePayload), std::string(kCanary)}) {
    result["candidates"].push_back(hostile_candidate(payload));
    json feasible = hostile_candidate(payload);
    feasible["id"] = "feasible-" + payload;
    feasible["feasible"] = true;
    feasible["why_not"] = "";
    feasible["cost_usd"] = 3.0e6;
    feasible["time_days"] = 50.0;
    feasible["step_s"] = 8.0;
    feasible["breakdown"] = {{"compute_s", 7.0}, {payload, 1.0}};
    result["candidates"].push_back(feasible);
  }
  // Every other place a string from the result reaches the page.
  const std::string all = std::string(kScriptPayload) + kAttributePayload + kCanary;
  result["plan"]["name"] = all;
  result["plan"]["file"] = all;
  result["plan"]["notes"].push_back(all);
  result["model_version"] = all;
  result["recommendation"]["headline"] = all;
  result["recommendation"]["reasons"].push_back(all);
  result["workloads"][0]["summary"] = all;
  result["workloads"][0]["axes"]["x_label"] = all;
  result["workloads"][1]["name"] = all;
  result["scaling"][0]["series"] = all;
  result["topology"]["label"] = all;
  result["topology"]["network"] = all;
  result["topology"]["fabric"] = all;
  result["topology"]["intra_node"] = all;

  const std::string html = plan_report_html(result);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find(kAttributePayload), std::string::npos);
  EXPECT_EQ(html.find("onmouseover=\""), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("dataset.pwned=1</script>"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<script"), 1u);
  EXPECT_EQ(occurrences(html, "</script>"), 1u);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&quot;onmouseover=&quot;x"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=&quot;document.body.dataset.pwned=1&quot;&gt;"), std::string::npos);
}

TEST(PlanReport, Deterministic) {
  const json result = sample();
  const std::string first = plan_report_html(result);
  EXPECT_EQ(first, plan_report_html(result));
  EXPECT_EQ(first, plan_report_html(json::parse(result.dump())));
}

TEST(PlanReport, SparseResultRenders) {
  std::string html;
  ASSERT_NO_THROW(html = plan_report_html(json{{"plan", {{"name", "x"}}}}));
  EXPECT_NE(html.find("<h1>x</h1>"), std::string::npos);
  EXPECT_NE(html.find("No scaling curves in this result."), std::string::npos);
  EXPECT_NE(html.find("No topology in this result."), std::string::npos);
  EXPECT_NE(html.find("document.body.dataset.reportReady"), std::string::npos);
  EXPECT_NO_THROW(plan_report_html(json::object()));
}

TEST(PlanReport, NonObjectThrows) {
  EXPECT_THROW(plan_report_html(json::array()), std::invalid_argument);
  EXPECT_THROW(plan_report_html(json(nullptr)), std::invalid_argument);
  EXPECT_THROW(plan_report_html(json("plan")), std::invalid_argument);
  EXPECT_THROW(plan_report_html(json(3)), std::invalid_argument);
}

TEST(PlanReport, WrongTypesDoNotThrow) {
  const json broken = json::parse(R"({
    "plan": {"name": 7, "file": ["a"], "hash": null, "notes": "not a list"},
    "model_version": {"v": 1},
    "counts": {"designs": "24", "layouts_evaluated": -3, "pruned_memory": 1e300},
    "recommendation": {"candidate": 12, "headline": null, "reasons": [1, null, "ok", {"a": 1}]},
    "workloads": [null, 3, {"name": "w", "kind": 5, "axes": "cost"}, {"name": "s", "kind": "serving", "axes": {"x": 1}}],
    "candidates": [null, 4, "c", [], {"workload": "w", "cost_usd": "3", "time_days": true, "breakdown": [1, 2]},
      {"workload": "w", "cost_usd": 1, "time_days": 2, "feasible": "yes", "pareto": 1, "chosen": "true",
       "breakdown": {"compute_s": "1", "tp_s": -1, "x_s": 2}},
      {"workload": "w", "cost_usd": 1, "time_days": 2, "breakdown": {"compute_s": 1e308, "tp_s": 1e308}},
      {"workload": "s", "gpus": -8, "usd_per_mtok": 0},
      {"workload": "nowhere", "gpus": 1e9, "usd_per_mtok": 1e-9}],
    "scaling": [null, {"series": ["x"], "points": {"gpus": 8}}, {"points": [{"gpus": 0, "efficiency": 1},
      {"gpus": -4, "efficiency": 2}, {"gpus": 8}, {"gpus": 1e12, "efficiency": -1}]}],
    "topology": {"nodes": 1e12, "gpus_per_node": -1, "nics_per_node": "8", "tiers": 9, "leaf_switches": 1e7,
                 "spine_switches": -5, "oversubscription": "1:1"}
  })");
  EXPECT_NO_THROW(plan_report_html(broken));
  for (const char* key : {"plan", "counts", "recommendation", "workloads", "candidates", "scaling", "topology"}) {
    json j = broken;
    j[key] = 42;
    EXPECT_NO_THROW(plan_report_html(j)) << key;
  }
}

TEST(PlanReport, NonFiniteNumbersShowAsDash) {
  json result = sample();
  json& c = result["candidates"][6];
  c["mfu"] = NAN;
  c["cost_usd"] = INFINITY;
  c["step_s"] = nullptr;
  c["time_days"] = -INFINITY;
  const std::string html = plan_report_html(result);
  EXPECT_EQ(html.find(">nan"), std::string::npos);
  EXPECT_EQ(html.find(">inf"), std::string::npos);
  EXPECT_EQ(html.find("$inf"), std::string::npos);
  EXPECT_EQ(html.find("data-v=\"nan\""), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"\">\u2014</td>"), std::string::npos);
}

TEST(PlanReport, ScatterIsCappedButTableIsComplete) {
  json result = {{"workloads", {{{"name", "big"}, {"kind", "training"}}}}, {"candidates", json::array()}};
  const int n = 6000;
  for (int i = 0; i < n; ++i) {
    result["candidates"].push_back({{"id", fmt::format("c{}", i)},
                                    {"workload", "big"},
                                    {"design", fmt::format("d{}", i)},
                                    {"feasible", true},
                                    {"pareto", i % 1000 == 0},
                                    {"chosen", i == 4321},
                                    {"cost_usd", 1e6 + 137.0 * ((i * 7919) % n)},
                                    {"time_days", 10.0 + 0.01 * i}});
  }
  const std::string html = plan_report_html(result);
  const std::string svg = svg_labelled(html, "Pareto chart for big");
  ASSERT_NE(svg, "");
  EXPECT_EQ(occurrences(svg, "<circle"), gf::report::kPlanScatterLimit);
  EXPECT_EQ(occurrences(svg, "class=\"pt front\""), 6u);
  EXPECT_EQ(occurrences(svg, "class=\"pt chosen\""), 1u);
  EXPECT_NE(html.find("a deterministic sample of 5,000 drawn"), std::string::npos);
  EXPECT_EQ(occurrences(html.substr(html.find("<tbody>")), "<tr"), static_cast<std::size_t>(n));
}

TEST(PlanReport, WideRangesUseLogAxes) {
  json result = {{"workloads", {{{"name", "w"}, {"kind", "training"}}}}, {"candidates", json::array()}};
  for (double cost : {1e5, 1e6, 1e7, 1e8}) {
    result["candidates"].push_back({{"workload", "w"}, {"cost_usd", cost}, {"time_days", 30.0 + cost / 1e7}});
  }
  const std::string html = plan_report_html(result);
  EXPECT_NE(html.find("The horizontal axis is logarithmic."), std::string::npos);
  const std::string svg = svg_labelled(html, "Pareto chart for w");
  for (const char* tick : {">100k<", ">1M<", ">10M<", ">100M<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
}

TEST(PlanReport, LargeTopologiesAreElided) {
  json result = sample();
  const std::string html = plan_report_html(result);
  const std::string svg = svg_labelled(html, "Topology of " + result["topology"]["label"].get<std::string>());
  ASSERT_NE(svg, "");
  // 64 nodes: 16 drawn, then the rest counted.
  EXPECT_EQ(occurrences(svg, "class=\"node\""), static_cast<std::size_t>(gf::report::kPlanDrawLimit));
  EXPECT_NE(svg.find("\u2026 48 more"), std::string::npos);
  EXPECT_EQ(occurrences(svg, "class=\"gpu\""), 16u * 8u);
  EXPECT_EQ(occurrences(svg, "class=\"leaf\""), 16u);
  EXPECT_EQ(occurrences(svg, "class=\"spine\""), 8u);
  for (const char* s : {"fat-tree", "2 tiers", "1:1 oversubscription", "network ib-ndr", "intra-node nvswitch"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
}
