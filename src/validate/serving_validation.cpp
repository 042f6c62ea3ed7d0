#include "validate/serving_validation.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "topo/cluster_loader.hpp"
#include "validate/machine.hpp"
#include "work/model_library.hpp"
#include "work/serving_fleet.hpp"

namespace gf::validate {

namespace {

constexpr std::string_view kFilePrefix = "data/validation/serving";

// The preset that stands for a row's GPU when the row names none.
const std::map<std::string, std::string>& presets() {
  static const std::map<std::string, std::string> p{{"a100-sxm4-80gb", "dgx-a100"}, {"a100-sxm4-40gb", "dgx-a100"},
                                                    {"h100-sxm5", "dgx-h100"},      {"h200-sxm", "hgx-h200"},
                                                    {"b200", "dgx-b200"},           {"l40s", "pcie-8x-l40s"},
                                                    {"h100-pcie", "pcie-8x-h100"},  {"a100-pcie-80gb", "pcie-8x-a100"}};
  return p;
}

bool has(const YAML::Node& r, const char* key) { return r[key] && !r[key].IsNull(); }

std::string text(const YAML::Node& r, const char* key, const std::string& fallback = {}) {
  return has(r, key) && r[key].IsScalar() ? r[key].Scalar() : fallback;
}

double number(const YAML::Node& r, const char* key, double fallback = 0) {
  return has(r, key) && r[key].IsScalar() ? r[key].as<double>(fallback) : fallback;
}

// The statistic a latency field gives, in the order benchmark clients report them.
bool statistic(const YAML::Node& n, std::string& which, double& value) {
  if (!n || n.IsNull()) return false;
  if (n.IsScalar()) {
    which = "mean";
    value = n.as<double>();
    return true;
  }
  for (const char* k : {"mean", "p50", "p90", "p99"})
    if (n[k] && n[k].IsScalar()) {
      which = k;
      value = n[k].as<double>();
      return true;
    }
  return false;
}

double pick(const work::Distribution& d, const std::string& which) {
  return which == "p50" ? d.p50 : which == "p90" ? d.p90 : which == "p99" ? d.p99 : d.mean;
}

// The engine limits trtllm-bench builds for a dataset (NVIDIA/TensorRT-LLM,
// tensorrt_llm/bench/build/tuning.py, finetune_setting, commit 04cba882): the batch is the
// requests the KV cache holds at the dataset's lengths (at most 4,096), rounded up to 32, 128 or
// 256 by size, at least 64; the token budget is that batch x (1 + ISL/OSL), at most 32,768,
// rounded up to 256, 512 or 1,024, at least 2,048.
std::pair<long, long> trtllm_bench_limits(double kv_requests, double isl, double osl, long pp) {
  const double bs = std::min(kv_requests, 4096.0) / static_cast<double>(pp);
  const double tokens = std::min(bs * (1 + isl / osl), 32768.0);
  auto up = [](double v, double step) { return static_cast<long>(step * std::ceil(v / step)); };
  const long max_bs = bs < 256 ? std::max(64L, up(bs, 32)) : bs < 1024 ? up(bs, 128) : up(bs, 256);
  const long max_tokens = tokens < 4096   ? std::max(2048L, up(tokens, 256))
                          : tokens < 8192 ? up(tokens, 512)
                                          : up(tokens, 1024);
  return {max_bs, max_tokens};
}

}  // namespace

std::vector<ServingCheck> check_serving(const hw::Catalog& catalog) {
  // Every built-in file of this suite (data/validation/serving*.yaml), in the embedded order (sorted by path),
  // so that a new source can bring its rows in a file of its own.
  std::vector<ServingCheck> out;
  for (const auto& f : data::files_under(kFilePrefix, ".yaml")) {
    auto more = check_serving(std::string(f.text), std::string(f.path), catalog);
    out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return out;
}

std::vector<ServingCheck> check_serving(const std::string& body, const std::string& file, const hw::Catalog& catalog) {
  const YAML::Node root = parse_yaml(body, file);
  const YAML::Node rows = root.IsMap() ? root["rows"] : root;
  if (!rows || !rows.IsSequence()) throw InputError({file, 1, 0}, "rows", "no list of rows", "rows: [ ... ]");
  std::vector<ServingCheck> out;
  for (const auto& r : rows) {
    ServingCheck c;
    c.id = text(r, "id");
    c.source_id = text(r, "source_id");
    c.model = text(r, "model");
    c.gpu = text(r, "gpu");
    c.calibration = r["calibration"] && r["calibration"].as<bool>(false);
    c.gpus = static_cast<long>(number(r, "gpus"));
    c.scenario = row_choice(r, file, "scenario", "offline", {"offline", "server", "concurrency"});
    const std::string precision = row_choice(r, file, "precision", "bf16", names(work::kWeightFormatNames));
    // KV precision: as given; unstated, fp8 with fp8 or fp4 weights (NVIDIA's quantized
    // checkpoints carry an fp8 KV cache), else the 16-bit type. Checked before any reason to skip
    // the row, so a typo is refused in every row.
    const std::string kv = row_choice(r, file, "kv_dtype",
                                      precision == "fp8" || precision == "fp4" ? "fp8"
                                      : precision == "fp16"                    ? "fp16"
                                                                               : "bf16",
                                      {"fp16", "bf16", "fp8"});
    auto skip = [&](const std::string& why) {
      c.skipped = why;
      out.push_back(c);
    };
    std::string preset = text(r, "preset");
    if (preset.empty() && presets().count(c.gpu) != 0) preset = presets().at(c.gpu);
    if (preset.empty()) {
      skip("no preset for " + c.gpu);
      continue;
    }
    const long tp = static_cast<long>(number(r, "tp", 1)), pp = static_cast<long>(number(r, "pp", 1));
    const long replicas = static_cast<long>(number(r, "replicas", 1));
    if (tp * pp * replicas != c.gpus) {
      skip("attention data parallelism with expert parallelism (DP attention) is not modelled");
      continue;
    }
    if (!has(r, "isl") || !has(r, "osl")) {
      skip("no input or output length in the source");
      continue;
    }
    work::ModelSpec m;
    try {
      m = work::library_model(c.model);
    } catch (const InputError&) {
      skip("model not in the library");
      continue;
    }
    work::ReplicaSpec rs;
    rs.tp = tp;
    rs.pp = pp;
    rs.ep = static_cast<long>(number(r, "ep", 1));
    if (rs.ep > tp) rs.ep = 1;  // EP over data-parallel attention ranks: not modelled, experts split by TP
    (void)work::parse_weight_format(precision, rs.weights);  // both checked by row_choice() above
    (void)work::parse_weight_format(kv, rs.kv);
    const std::string engine = text(r, "engine", "vllm");
    // Engine limits: vLLM's defaults; TensorRT-LLM rows get trtllm-bench's (below, once the KV
    // cache is known).
    rs.max_seqs = static_cast<long>(number(r, "max_seqs", engine == "trt-llm" ? 2048 : 256));
    rs.max_batch_tokens = static_cast<long>(number(r, "max_batch_tokens", 8192));
    // TensorRT-LLM's benchmark gives the KV cache a fraction of the memory left after the
    // weights: 0.95 "in the majority of cases" (its performance overview, quoted in each row).
    if (engine == "trt-llm") rs.kv_free_fraction = number(r, "kv_free_fraction", 0.95);

    work::LoadSpec load;
    load.input = work::LengthDistribution(std::lround(number(r, "isl")));
    load.output = work::LengthDistribution(std::max(1L, std::lround(number(r, "osl"))));
    double offered = 0;
    long concurrency = 0;
    const long stated = static_cast<long>(number(r, "requests", 0));
    if (c.scenario == "server") {
      load.kind = work::ArrivalKind::poisson;
      offered = load.rate = number(r, "rate");
      load.requests = std::clamp<long>(std::lround(offered * 120), 1000, 6000);
    } else if (c.scenario == "concurrency") {
      load.kind = work::ArrivalKind::concurrency;
      concurrency = load.concurrency = static_cast<long>(number(r, "concurrency"));
      load.requests = std::clamp<long>(10 * concurrency, 1000, 20000);
    } else {
      load.kind = work::ArrivalKind::offline;
      load.requests = std::min<long>(stated > 0 ? stated : 3000, std::max<long>(3000, 3 * rs.max_seqs * replicas));
    }
    if ((c.scenario == "server" && !(offered > 0)) || (c.scenario == "concurrency" && concurrency < 1)) {
      skip("no rate or concurrency given");
      continue;
    }
    try {
      auto spec = topo::load_preset(preset, catalog);
      topo::ClusterOverrides ov;
      ov.nodes = std::max<long>(1, (c.gpus + 7) / 8);
      topo::apply_overrides(spec, ov, catalog);
      const topo::Topology t(spec, catalog);
      if (t.gpu_spec().name != c.gpu && presets().count(c.gpu) == 0) {
        skip("the preset's GPU differs from the row's");
        continue;
      }
      work::TrainingContext context(t);
      if (engine == "trt-llm" && !has(r, "max_seqs")) {
        // trtllm-bench's own limits for these lengths, from the KV cache this replica holds.
        const work::ReplicaSet probe(context, m, rs, 1);
        const double isl = number(r, "isl"), osl = std::max(1.0, number(r, "osl"));
        const auto [bs, tokens] =
            trtllm_bench_limits(static_cast<double>(probe.first().kv_capacity_tokens()) / (isl + osl), isl, osl, rs.pp);
        rs.max_seqs = bs;
        rs.max_batch_tokens = tokens;
        if (c.scenario == "offline")
          load.requests = std::min<long>(stated > 0 ? stated : 3000, std::max<long>(3000, 3 * bs * replicas));
      }
      const work::ReplicaSet set(context, m, rs, replicas);
      work::SimulationOptions so;
      so.scheduler.max_seqs = rs.max_seqs;
      so.scheduler.max_batch_tokens = rs.max_batch_tokens;
      so.scheduler.reserve_output = engine == "trt-llm";
      const auto run = work::simulate_serving(set.replicas(), work::generate_requests(load), concurrency, so);
      const work::ServingSummary s = work::summarize(run, offered, {}, rs.ep == 1);
      double measured = number(r, "measured_output_tokens_per_s");
      if (!(measured > 0) && number(r, "measured_requests_per_s") > 0)
        measured = number(r, "measured_requests_per_s") * number(r, "osl");
      c.bound = s.overloaded ? "overloaded" : s.bound;
      if (measured > 0) {
        ServingCheck t = c;
        t.metric = c.scenario == "server" ? "output tok/s at the rate" : "output tok/s";
        t.measured = measured;
        // Server rows were measured by clients that time the run until its last request returns
        // (the drain included): compare like with like.
        t.predicted = c.scenario == "server" ? s.run_output_tokens_per_s : s.output_tokens_per_s;
        t.error = (t.predicted - t.measured) / t.measured;
        out.push_back(t);
      }
      for (const auto& [field, name, dist] :
           {std::tuple{"measured_ttft_ms", "TTFT", &s.ttft_ms}, std::tuple{"measured_tpot_ms", "TPOT", &s.tpot_ms}}) {
        std::string which;
        double value = 0;
        if (!statistic(r[field], which, value) || !(value > 0)) continue;
        ServingCheck l = c;
        l.latency = true;
        l.metric = std::string(name) + " " + which + " ms";
        l.measured = value;
        l.predicted = pick(*dist, which);
        l.error = (l.predicted - l.measured) / l.measured;
        out.push_back(l);
      }
    } catch (const InputError& e) {
      skip(std::string("the model refuses the layout: ") + e.problem());
      continue;
    }
  }
  return out;
}

}  // namespace gf::validate
