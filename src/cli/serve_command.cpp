#include "cli/serve_command.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "band/band_class.hpp"
#include "band/error_band.hpp"
#include "cli/collective_command.hpp"
#include "cli/number_options.hpp"
#include "cli/output_files.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "report/chrome_trace.hpp"
#include "report/generalisation_report.hpp"
#include "report/table.hpp"
#include "topo/topology.hpp"
#include "work/mig_profile.hpp"
#include "work/model_library.hpp"
#include "work/serving_fleet.hpp"

namespace gf::cli {

void ServeOptions::add_to(CLI::App& app) {
  cluster.add_to(app);
  app.add_option("--model", model, "A built-in model (`gpufabric train --list`)");
  app.add_option("--model-file", model_file, "A model YAML file (docs/model-format.md)");
  app.add_option("--tp", tp, "Tensor-parallel size of a replica");
  app.add_option("--pp", pp, "Pipeline stages of a replica (PP batches in flight, as vLLM runs them)");
  app.add_option("--ep", ep, "Expert-parallel size inside the TP group (MoE models)");
  app.add_option("--gpus", gpus,
                 "GPUs serving: GPUs / (TP x PP) replicas behind one load balancer (default: one replica)");
  app.add_option("--precision", precision,
                 "Weights: fp16 | bf16 | fp8 (Ada, Hopper and later) | fp4 (Blackwell) | int4 (weight-only)");
  app.add_option("--kv-dtype", kv_dtype, "KV cache: fp16 | bf16 | fp8 (default: bf16, fp16 with --precision fp16)");
  app.add_option("--gpu-memory-utilization", gpu_memory_utilization,
                 "Fraction of GPU memory for weights, activations and the KV cache (vLLM's; default 0.9)");
  app.add_option("--kv-free-fraction", kv_free_fraction,
                 "Give the KV cache this fraction of the memory left after weights and activations (TensorRT-LLM's "
                 "kv_cache_free_gpu_mem_fraction) instead of --gpu-memory-utilization");
  app.add_option("--max-batch-tokens", max_batch_tokens, "Token budget per iteration (vLLM's max_num_batched_tokens)");
  app.add_option("--max-seqs", max_seqs, "Sequences per iteration (vLLM's max_num_seqs)");
  app.add_option("--block-size", block_size, "KV cache page, tokens (default 16)");
  app.add_option("--admission", admission,
                 "preempt (vLLM: KV blocks taken as tokens come, the newest request preempted when they run out) | "
                 "no-evict (TensorRT-LLM's GUARANTEED_NO_EVICT: a request's whole KV set aside on admission)");
  app.add_flag("--no-chunked-prefill", no_chunked_prefill, "A prompt is prefilled whole in one iteration");
  app.add_option("--rate", rate, "Poisson arrivals, requests per second (with --slo-*: the rate to size a fleet for)");
  app.add_option("--concurrency", concurrency,
                 "A fixed number of clients, each sending its next request on completion");
  app.add_option("--offline", offline, "All requests at once (max throughput), N of them (default 1000)")
      ->expected(0, 1);
  app.add_option("--ramp-up", ramp_up,
                 "With --concurrency: start the clients one after another over this long (e.g. 10s), as vLLM's "
                 "--ramp-up-strategy and AIPerf's --concurrency-ramp-duration do; default all at once, as "
                 "vLLM's bench serve sends them");
  app.add_option("--arrivals", arrivals, "A trace of requests: CSV of arrival_s,input_tokens,output_tokens");
  app.add_option("--isl", isl, "Input tokens: a number, or a histogram file of tokens,weight lines");
  app.add_option("--osl", osl, "Output tokens: a number, or a histogram file of tokens,weight lines");
  app.add_option("--requests", requests, "Requests to simulate (default 1000; concurrency: 10 x clients at least)");
  app.add_option("--duration", duration, "Poisson: simulate this long (e.g. 1h, 600s) instead of --requests");
  app.add_option("--seed", seed, "Random seed of arrivals and lengths");
  app.add_option("--slo-ttft", slo_ttft, "Time-to-first-token goal, e.g. 500ms");
  app.add_option("--slo-tpot", slo_tpot, "Time-per-output-token goal, e.g. 50ms");
  app.add_option("--slo-percentile", slo_percentile, "The percentile that must meet each goal (default 90)");
  app.add_option("--peak", peak, "Size for this multiple of --rate too and compare scaling out and up");
  app.add_option("--sweep-rate", sweep_rate, "Throughput-latency curve over Poisson rates, e.g. 1,2,4,8");
  app.add_option("--sweep-concurrency", sweep_concurrency, "Throughput-latency curve over concurrencies, e.g. 1,8,64");
  app.add_option("--mig", mig,
                 "Serve from MIG instances of this profile (e.g. 1g.10gb, 3g.40gb): each GPU holds as many replicas "
                 "as the profile allows, each with its share of SMs, memory bandwidth and memory");
  app.add_option("--disaggregate", disaggregate,
                 "P:D: prefill and decode on separate instances (P prefill, D decode of the layout per unit); each "
                 "request's KV cache moves between them over the real links");
  app.add_option("--background", background,
                 "Another job on the GPUs serving leaves free, running OP:SIZE back to back (e.g. all_reduce:1G): its "
                 "traffic contends with the KV-cache transfers of --disaggregate");
  app.add_option("--format", format, "table | json");
  app.add_option("--trace", trace, "Write the iterations as a Chrome/Perfetto trace (JSON) to this file");
}

namespace {

constexpr double kGiB = 1073741824.0;

// Concurrent clients: each is a request in flight, and by default the run sends 10 x clients
// requests, which at the default lengths must stay within the steps a command may simulate.
constexpr long kMaxConcurrency = 50000;
// Fleet sizing simulates each candidate layout about 15 times (its capacity, a light load, a
// bisection on the rate, checks of the fleet) and again at --peak; its checks run 8000 requests.
constexpr long kMaxSizingRequests = 8000;
// Points of one --sweep-rate or --sweep-concurrency curve.
constexpr std::size_t kMaxSweepPoints = 64;

// The text of a load file (a histogram or a trace), refused before it is read when it is larger
// than any file of the rows a run may hold.
std::string read_load_file(const std::string& path, const std::string& flag) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > static_cast<std::uintmax_t>(work::kMaxLoadFileBytes))
    throw InputError({path, 0, 0}, flag, fmt::format("{} bytes", size),
                     fmt::format("a file of at most {} MiB", work::kMaxLoadFileBytes >> 20));
  return read_text_file(path, flag);
}

work::LengthDistribution length_of(const std::string& flag, const std::string& text) {
  long v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  const std::string valid = fmt::format(
      "a number of tokens from 1 to {} (8 x the longest context in the catalog), or "
      "a histogram file of tokens,weight lines",
      work::kMaxRequestTokens);
  // Too many digits for a long is a number too large, not a file name.
  if (!text.empty() && p == end && (ec == std::errc() || ec == std::errc::result_out_of_range)) {
    if (ec != std::errc() || v < 1 || v > work::kMaxRequestTokens)
      throw InputError({}, flag, "got '" + text + "'", valid);
    return work::LengthDistribution(v);
  }
  if (!std::filesystem::exists(text))
    throw InputError({}, flag, "'" + text + "' is neither a number nor a file", valid);
  return work::LengthDistribution::from_histogram(read_load_file(text, flag), text);
}

// A load must not ask for more steps than the simulator takes in about 2 s. `requests_from`
// names the flags that set the number of requests.
void check_steps(const std::string& requests_from, const work::LoadSpec& load, long max_batch_tokens) {
  const double steps = work::planned_steps(load, max_batch_tokens);
  if (steps <= work::kMaxSimulatedSteps) return;
  const std::string what =
      load.kind == work::ArrivalKind::trace
          ? fmt::format("{} requests", load.trace.size())
          : fmt::format("{} requests x ({:.0f} output tokens (--osl) + {:.0f} prefill chunks of --isl {:.0f})",
                        load.requests, load.output.mean(),
                        std::ceil(load.input.mean() / static_cast<double>(max_batch_tokens)), load.input.mean());
  throw InputError(
      {}, requests_from + " x (--isl, --osl)",
      fmt::format("{} ask for {:.0f} simulation steps (one request's decode token or prefill chunk in one "
                  "iteration)",
                  what, steps),
      fmt::format("at most {:.0f} steps (about 2 s): fewer requests or shorter --isl/--osl", work::kMaxSimulatedSteps));
}

// A request must fit the model's context: its prompt alone, and its prompt with its answer, as
// vLLM's OpenAI server refuses it ("This model's maximum context length is N tokens. However, you
// requested M tokens (P in the messages, C in the completion)", entrypoints/openai/
// serving_engine.py, _validate_input). The message names the length that is too long by itself,
// or both when only their sum is; `input_field` and `output_field` name them as the user gave them.
void check_context(const work::ModelSpec& m, const work::LoadSpec& load, const std::string& input_field,
                   const std::string& output_field) {
  long input = 0, output = 0, both_in = 0, both_out = 0;
  auto see = [&](long in, long out) {
    input = std::max(input, in);
    output = std::max(output, out);
    if (in + out > both_in + both_out) {
      both_in = in;
      both_out = out;
    }
  };
  if (load.kind == work::ArrivalKind::trace)
    for (const work::Request& r : load.trace) see(r.input, r.output);
  else
    see(load.input.max(), load.output.max());
  const long context = m.max_context;
  const std::string valid =
      fmt::format("a prompt and answer of at most {} tokens together, {}'s context", context, m.name);
  if (input > context)
    throw InputError(
        {}, input_field,
        fmt::format("a prompt of {} tokens is longer than {}'s context of {} tokens", input, m.name, context), valid);
  if (output > context)
    throw InputError(
        {}, output_field,
        fmt::format("an answer of {} tokens is longer than {}'s context of {} tokens", output, m.name, context), valid);
  if (both_in + both_out > context)
    throw InputError(
        {}, input_field + " + " + output_field,
        fmt::format("a request of {} input + {} output = {} tokens is longer than {}'s context of {} tokens", both_in,
                    both_out, both_in + both_out, m.name, context),
        valid);
}

nlohmann::json distribution_json(const work::Distribution& d) {
  return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}};
}

std::string ms(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v); }

// One line per load in a curve, as benchmark clients print them.
report::TextTable curve_table(const char* load) {
  return report::TextTable({load, "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "E2E p50",
                            "batch", "KV peak", "bound"},
                           std::vector<report::TextTable::Align>(11, report::TextTable::Align::right));
}

void curve_row(report::TextTable& t, const std::string& load, const work::ServingSummary& s) {
  t.add_row({load, fmt::format("{:.2f}", s.requests_per_s), fmt::format("{:.0f}", s.output_tokens_per_s),
             ms(s.ttft_ms.p50), ms(s.ttft_ms.p99), ms(s.tpot_ms.p50), ms(s.tpot_ms.p99), ms(s.e2e_ms.p50),
             fmt::format("{}", s.max_batch), fmt::format("{:.0f}%", 100 * s.kv_peak),
             s.overloaded ? fmt::format("overloaded x{:.2f}", s.overload_factor) : s.bound});
}

nlohmann::json summary_json(const work::ServingSummary& s) {
  nlohmann::json j;
  j["requests"] = s.requests;
  j["duration_s"] = s.duration_s;
  j["window_s"] = s.window_s;
  j["output_tokens_per_s"] = s.output_tokens_per_s;
  j["input_tokens_per_s"] = s.input_tokens_per_s;
  j["requests_per_s"] = s.requests_per_s;
  j["ttft_ms"] = distribution_json(s.ttft_ms);
  j["tpot_ms"] = distribution_json(s.tpot_ms);
  j["e2e_ms"] = distribution_json(s.e2e_ms);
  j["kv_peak_fraction"] = s.kv_peak;
  j["kv_mean_fraction"] = s.kv_mean;
  j["max_batch"] = s.max_batch;
  j["mean_batch"] = s.mean_batch;
  j["preemptions"] = s.preemptions;
  j["max_waiting"] = s.max_waiting;
  j["bound"] = s.bound;
  j["bound_detail"] = s.detail;
  j["time_shares"] = {
      {"compute", s.compute_share}, {"memory", s.memory_share}, {"communication", s.communication_share}};
  j["overloaded"] = s.overloaded;
  if (s.overloaded) j["overload_factor"] = s.overload_factor;
  return j;
}

std::string layout_name(const work::ReplicaSpec& r, const work::DisaggregatedSpec& d = {}) {
  if (!r.mig.empty()) return "MIG " + r.mig;
  std::string s = r.pp > 1 ? fmt::format("TP{} x PP{}", r.tp, r.pp) : fmt::format("TP{}", r.tp);
  if (d.on()) s += fmt::format(" {}P:{}D", d.prefill, d.decode);
  return s;
}

}  // namespace

double parse_duration_s(const std::string& flag, const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) != 0 || text[digits] == '.'))
    ++digits;
  const std::string unit = text.substr(digits);
  double scale = 0;
  if (unit.empty() || unit == "ms")
    scale = 1e-3;
  else if (unit == "us")
    scale = 1e-6;
  else if (unit == "s")
    scale = 1;
  else if (unit == "min")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  const char* valid = "a positive duration: 500ms, 1s, 250us, 10min, 1h (a bare number is milliseconds)";
  if (scale == 0 || digits == 0) throw InputError({}, flag, "got '" + text + "'", valid);
  return parse_number(flag, text.substr(0, digits), 1e-12, 1e12, valid) * scale;
}

std::string ServeOptions::run() const {
  if (format != "table" && format != "json") throw InputError({}, "--format", "got '" + format + "'", "table, json");
  // The trace: checked now, written whole at the end (no 0-byte file from a run that fails).
  if (!trace.empty()) {
    auto inputs = cluster_inputs(cluster);
    inputs.insert(inputs.end(),
                  {{"--model-file", model_file}, {"--arrivals", arrivals}, {"--isl", isl}, {"--osl", osl}});
    refuse_same_file(inputs, {{"--trace", trace}});
    check_writable(trace, "--trace");
  }
  if (model.empty() == model_file.empty())
    throw InputError({}, "--model", model.empty() ? "no model given" : "both --model and --model-file",
                     "--model NAME (`gpufabric train --list`) or --model-file FILE");
  const work::ModelSpec m = model.empty() ? work::model_from_file(model_file) : work::library_model(model);

  work::ReplicaSpec r;
  r.tp = parse_whole("--tp", tp, 1, 1024);
  r.pp = parse_whole("--pp", pp, 1, 1024);
  r.ep = parse_whole("--ep", ep, 1, 1024);
  r.weights = parse_name_or_throw(work::kWeightFormatNames, precision, "--precision");
  const std::string kv = kv_dtype.empty() ? (precision == "fp16" ? "fp16" : "bf16") : kv_dtype;
  if (!work::parse_weight_format(kv, r.kv) || r.kv == work::WeightFormat::fp4 || r.kv == work::WeightFormat::int4)
    throw InputError({}, "--kv-dtype", "got '" + kv + "'", "fp16, bf16, fp8");
  r.gpu_memory_utilization =
      parse_number("--gpu-memory-utilization", gpu_memory_utilization, 0.05, 1.0, "a fraction from 0.05 to 1");
  if (!kv_free_fraction.empty())
    r.kv_free_fraction = parse_number("--kv-free-fraction", kv_free_fraction, 0.01, 1.0, "a fraction from 0.01 to 1");
  r.max_batch_tokens = parse_whole("--max-batch-tokens", max_batch_tokens, 1, 1L << 22);
  r.max_seqs = parse_whole("--max-seqs", max_seqs, 1, 1L << 20);
  work::DisaggregatedSpec disagg;
  if (!disaggregate.empty()) {
    const auto colon = disaggregate.find(':');
    const char* valid = "P:D, the prefill and decode instances per unit, e.g. 1:2";
    if (colon == std::string::npos) throw InputError({}, "--disaggregate", "got '" + disaggregate + "'", valid);
    disagg.prefill = parse_whole("--disaggregate", disaggregate.substr(0, colon), 1, 1024);
    disagg.decode = parse_whole("--disaggregate", disaggregate.substr(colon + 1), 1, 1024);
  }
  std::optional<work::BackgroundJob> bg;
  if (!background.empty()) {
    const BackgroundCollective b = parse_background("--background", background);
    bg = work::BackgroundJob{{}, b.op, b.bytes};
  }
  work::SimulationOptions sim;
  sim.scheduler.max_batch_tokens = r.max_batch_tokens;
  sim.scheduler.max_seqs = r.max_seqs;
  sim.scheduler.block_tokens = parse_whole("--block-size", block_size, 1, 4096);
  sim.scheduler.chunked_prefill = !no_chunked_prefill;
  if (admission != "preempt" && admission != "no-evict")
    throw InputError({}, "--admission", "got '" + admission + "'", "preempt, no-evict");
  sim.scheduler.reserve_output = admission == "no-evict";
  sim.record_trace = !trace.empty();
  // One budget for every run of this command: a sweep or a fleet sizing is bounded as one run is.
  work::WorkBudget budget;
  sim.budget = &budget;

  // The load.
  work::LoadSpec load;
  load.input = length_of("--isl", isl);
  load.output = length_of("--osl", osl);
  load.seed = static_cast<std::uint64_t>(parse_whole("--seed", seed, 0, 1L << 62));
  sim.seed = load.seed;  // the balancer draws under the same seed as the load
  const int kinds = !rate.empty() + !concurrency.empty() + !offline.empty() + !arrivals.empty();
  if (kinds > 1)
    throw InputError({}, "--rate", "more than one load given", "one of --rate, --concurrency, --offline, --arrivals");
  const bool sizing = !slo_ttft.empty() || !slo_tpot.empty();
  work::SloSpec slo;
  if (!slo_ttft.empty()) slo.ttft_s = parse_duration_s("--slo-ttft", slo_ttft);
  if (!slo_tpot.empty()) slo.tpot_s = parse_duration_s("--slo-tpot", slo_tpot);
  slo.percentile = parse_number("--slo-percentile", slo_percentile, 1, 100, "a percentile from 1 to 100");
  if (sizing && rate.empty())
    throw InputError({}, "--slo-ttft", "latency goals without a rate to size for",
                     "--rate R with --slo-ttft/--slo-tpot");
  if (!peak.empty() && !sizing)
    throw InputError({}, "--peak", "a peak without latency goals", "--rate R --slo-ttft T --slo-tpot T --peak F");
  double offered = 0;
  long default_requests = 1000;
  std::string requests_from = "--requests";  // for messages: the flags that set the requests
  if (!rate.empty()) {
    load.kind = work::ArrivalKind::poisson;
    offered = load.rate = parse_number("--rate", rate, 1e-6, 1e7, "a positive number of requests per second");
  } else if (!concurrency.empty()) {
    load.kind = work::ArrivalKind::concurrency;
    load.concurrency = parse_whole("--concurrency", concurrency, 1, kMaxConcurrency);
    default_requests = std::max<long>(1000, 10 * load.concurrency);
    if (!ramp_up.empty()) load.ramp_up_s = parse_duration_s("--ramp-up", ramp_up);
    if (requests.empty()) requests_from = "--concurrency";
  } else if (!arrivals.empty()) {
    load.kind = work::ArrivalKind::trace;
    load.trace = work::parse_trace(read_load_file(arrivals, "--arrivals"), arrivals);
    requests_from = "--arrivals";
    sim.input_field = "--arrivals input_tokens";
    sim.output_field = "--arrivals output_tokens";
  } else {
    load.kind = work::ArrivalKind::offline;
    if (!offline.empty()) {
      default_requests = parse_whole("--offline", offline, 1, work::kMaxRequests);
      if (requests.empty()) requests_from = "--offline";
    }
  }
  load.requests = requests.empty() ? default_requests : parse_whole("--requests", requests, 1, work::kMaxRequests);
  if (!ramp_up.empty() && load.kind != work::ArrivalKind::concurrency)
    throw InputError({}, "--ramp-up", "a ramp-up without --concurrency", "--concurrency N --ramp-up 10s");
  if (!duration.empty()) {
    if (load.kind != work::ArrivalKind::poisson)
      throw InputError({}, "--duration", "a duration without --rate", "--rate R --duration 1h");
    const double seconds = parse_duration_s("--duration", duration);
    const double n = load.rate * seconds;
    if (n > static_cast<double>(work::kMaxRequests))
      throw InputError({}, "--rate x --duration",
                       fmt::format("{} req/s x {} s = {:.0f} requests", load.rate, seconds, n),
                       fmt::format("at most {} requests: a lower --rate or a shorter --duration", work::kMaxRequests));
    load.requests = std::max<long>(1, std::lround(n));
    requests_from = "--rate x --duration";
  }

  sim.requests_field = requests_from;
  check_context(m, load, sim.input_field, sim.output_field);
  // A sweep or a sizing counts its own runs' steps below.
  if (!sizing && sweep_rate.empty() && sweep_concurrency.empty()) check_steps(requests_from, load, r.max_batch_tokens);

  const hw::Catalog catalog = cluster.load_catalog();
  ClusterOptions where = cluster;
  // Sizing disaggregated serving needs prefill and decode instances apart: two nodes at least
  // (the fleet's nodes are alike; whole-node instances then send their KV over the network).
  if (sizing && disagg.on() && where.nodes.empty() && where.load_spec(catalog).nodes < 2) where.nodes = "2";
  const topo::Topology t(where.load_spec(catalog), catalog);
  work::TrainingContext context(t);
  if (!mig.empty()) {
    if (disagg.on()) throw InputError({}, "--mig", "MIG instances with --disaggregate", "one of --mig, --disaggregate");
    r.mig = mig;
    r.per_gpu = work::mig_profile(t.gpu_spec(), mig).max_instances;
  }
  const long unit_gpus = r.gpus() * disagg.instances();
  const long serving_gpus = gpus.empty() ? unit_gpus : parse_whole("--gpus", gpus, 1, 1L << 24);
  if (serving_gpus % unit_gpus != 0)
    throw InputError({}, "--gpus",
                     fmt::format("{} GPUs do not split into {} of {} GPUs", serving_gpus,
                                 disagg.on() ? "units of prefill and decode instances" : "replicas", unit_gpus),
                     fmt::format("a multiple of {}", unit_gpus));
  if (serving_gpus > t.gpu_count())
    throw InputError({}, "--gpus", fmt::format("{} GPUs; the cluster has {}", serving_gpus, t.gpu_count()),
                     "at most the cluster's GPUs (more nodes with --nodes)");
  const long replicas = serving_gpus / unit_gpus * r.per_gpu;  // units when disaggregated; MIG instances
  if (bg) {
    // From the next whole node on: NCCL groups need the same GPU count on every node.
    const long per_node = t.gpus_per_node();
    for (long g = (serving_gpus + per_node - 1) / per_node * per_node; g < t.gpu_count(); ++g) bg->gpus.push_back(g);
    if (bg->gpus.size() < 2)
      throw InputError({}, "--background", "no whole node left for another job",
                       "fewer serving GPUs (--gpus) or more nodes (--nodes)");
  }

  const std::string header =
      fmt::format("# serve {} on {} ({} x {}), {} weights, {} KV cache\n", m.name, t.spec().name, t.gpu_count(),
                  t.gpu_spec().name, work::to_string(r.weights), work::to_string(r.kv));

  // Fleet sizing.
  if (sizing) {
    std::vector<work::ReplicaSpec> candidates;
    for (long tpc : {1L, 2L, 4L, 8L, 16L}) {
      if (tpc > t.gpus_per_node() || m.heads % tpc != 0) continue;
      work::ReplicaSpec c = r;
      c.tp = tpc;
      c.pp = 1;
      c.ep = 1;
      c.mig.clear();
      c.per_gpu = 1;
      candidates.push_back(c);
    }
    // With --mig, its instances compete with whole GPUs (a small model may need less than a GPU).
    if (!r.mig.empty()) candidates.insert(candidates.begin(), r);
    work::SizingOptions so;
    so.simulation = sim;
    so.simulation.record_trace = false;
    if (!requests.empty() && load.requests > kMaxSizingRequests)
      throw InputError({}, "--requests", fmt::format("{} requests per run of a fleet sizing", load.requests),
                       fmt::format("at most {} with --slo-ttft/--slo-tpot: each layout is simulated about 15 times",
                                   kMaxSizingRequests));
    so.requests = requests.empty() ? 600 : load.requests;
    const double peak_factor =
        peak.empty() ? 0 : parse_number("--peak", peak, 1, 1000, "a multiple of --rate, at least 1");
    const work::FleetSizing base = work::size_fleet(context, m, candidates, load, offered, slo, so, disagg);
    work::FleetSizing at_peak;
    if (peak_factor > 0)
      at_peak = work::size_fleet(context, m, candidates, load, offered * peak_factor, slo, so, disagg);
    auto best_reachable = [&](const work::FleetSizing& f) {
      std::string best;
      double ttft = 1e300, tpot = 1e300;
      for (const auto& l : f.layouts) {
        if (l.best.requests == 0) continue;
        ttft = std::min(ttft, l.best.ttft_ms.p90);
        tpot = std::min(tpot, l.best.tpot_ms.p90);
      }
      if (ttft > 1e299) return std::string("no layout fits the model");
      return fmt::format("the best any layout reaches is p90 TTFT {:.0f} ms and p90 TPOT {:.1f} ms", ttft, tpot);
    };
    if (base.chosen < 0) {
      std::string why;
      for (const auto& l : base.layouts)
        why += fmt::format("{}: {}. ", layout_name(l.replica, l.disaggregated), l.why_not);
      throw InputError(
          {}, slo.ttft_s > 0 ? "--slo-ttft" : "--slo-tpot",
          fmt::format("no layout meets the goals (TTFT {:.0f} ms, TPOT {:.0f} ms at p{:.0f}) at {} req/s: "
                      "{}{}",
                      1e3 * slo.ttft_s, 1e3 * slo.tpot_s, slo.percentile, offered, why, best_reachable(base)),
          "looser goals, a faster GPU, or a smaller model or precision");
    }
    if (format == "json") {
      auto fleet_json = [&](const work::FleetSizing& f) {
        nlohmann::json j;
        j["rate"] = f.rate;
        j["layouts"] = nlohmann::json::array();
        for (const auto& l : f.layouts) {
          nlohmann::json x{{"tp", l.replica.tp}, {"pp", l.replica.pp}, {"fits", l.fits}};
          if (l.disaggregated.on())
            x["disaggregate"] = {{"prefill", l.disaggregated.prefill}, {"decode", l.disaggregated.decode}};
          if (!l.fits)
            x["why_not"] = l.why_not;
          else {
            x["replica_rate"] = l.replica_rate;
            x["replicas"] = l.replicas;
            x["gpus"] = l.gpus;
            x["nodes"] = l.nodes;
            x["goodput_rps"] = l.fleet.goodput_rps;
            x["slo_attainment"] = l.fleet.slo_attainment;
            x["fleet"] = summary_json(l.fleet);
          }
          j["layouts"].push_back(x);
        }
        if (f.chosen >= 0) {
          const auto& c = f.layouts[static_cast<std::size_t>(f.chosen)];
          j["chosen"] = {{"tp", c.replica.tp}, {"pp", c.replica.pp}, {"replicas", c.replicas},
                         {"gpus", c.gpus},     {"nodes", c.nodes},   {"goodput_rps", c.fleet.goodput_rps}};
        }
        return j;
      };
      nlohmann::json j;
      j["model"] = m.name;
      j["cluster"] = t.spec().name;
      j["slo"] = {{"ttft_ms", 1e3 * slo.ttft_s}, {"tpot_ms", 1e3 * slo.tpot_s}, {"percentile", slo.percentile}};
      j["base"] = fleet_json(base);
      if (peak_factor > 0) {
        j["peak_factor"] = peak_factor;
        j["peak"] = fleet_json(at_peak);
      }
      return j.dump(2) + "\n";
    }
    std::string out = header;
    out += fmt::format("# sizing for {} req/s, goals: TTFT {:.0f} ms and TPOT {:.0f} ms at p{:.0f}; isl {}, osl {}\n",
                       offered, 1e3 * slo.ttft_s, 1e3 * slo.tpot_s, slo.percentile, load.input.describe(),
                       load.output.describe());
    // A layout whose idle latency is already near a goal serves it only at a trickle: say why.
    auto note = [&](const work::LayoutSizing& l, bool chosen) {
      std::string n = chosen ? "<- fewest GPUs" : "";
      const double ttft = slo.percentile >= 99 ? l.best.ttft_ms.p99 : l.best.ttft_ms.p90;
      const double tpot = slo.percentile >= 99 ? l.best.tpot_ms.p99 : l.best.tpot_ms.p90;
      if (slo.ttft_s > 0 && ttft > 0.8e3 * slo.ttft_s)
        n += fmt::format("{}nearly idle, TTFT is already {:.0f} ms", n.empty() ? "" : "; ", ttft);
      else if (slo.tpot_s > 0 && tpot > 0.8e3 * slo.tpot_s)
        n += fmt::format("{}nearly idle, TPOT is already {:.1f} ms", n.empty() ? "" : "; ", tpot);
      return n;
    };
    auto fleet_table = [&](const work::FleetSizing& f) {
      std::string reasons;
      report::TextTable tab({"layout", "req/s per replica", "replicas/units", "GPUs", "nodes", "goodput req/s",
                             "TTFT p90", "TPOT p90", "note"});
      for (std::size_t i = 0; i < f.layouts.size(); ++i) {
        const auto& l = f.layouts[i];
        if (!l.fits) {
          tab.add_row({layout_name(l.replica, l.disaggregated), "-", "-", "-", "-", "-", "-", "-", "see below"});
          reasons += fmt::format("  {}: {}\n", layout_name(l.replica, l.disaggregated), l.why_not);
          continue;
        }
        tab.add_row({layout_name(l.replica, l.disaggregated), fmt::format("{:.2f}", l.replica_rate),
                     fmt::format("{}", l.replicas), fmt::format("{}", l.gpus), fmt::format("{}", l.nodes),
                     fmt::format("{:.2f}", l.fleet.goodput_rps), ms(l.fleet.ttft_ms.p90), ms(l.fleet.tpot_ms.p90),
                     note(l, static_cast<int>(i) == f.chosen)});
      }
      return tab.render() + reasons;
    };
    out += fleet_table(base);
    if (disagg.on()) {
      const work::LayoutSizing *co = nullptr, *dis = nullptr;
      for (const auto& l : base.layouts)
        if (l.fits) {
          const work::LayoutSizing*& slot = l.disaggregated.on() ? dis : co;
          if (slot == nullptr || l.gpus < slot->gpus) slot = &l;
        }
      if (co != nullptr && dis != nullptr)
        out += fmt::format("\nDisaggregated {} needs {} GPUs against {} for co-located {} ({:+.0f}%)\n",
                           layout_name(dis->replica, dis->disaggregated), dis->gpus, co->gpus, layout_name(co->replica),
                           100.0 * static_cast<double>(dis->gpus - co->gpus) / static_cast<double>(co->gpus));
    }
    const auto& c = base.layouts[static_cast<std::size_t>(base.chosen)];
    out += fmt::format(
        "\nFleet: {} {} of {} = {} GPUs on {} node(s); goodput {:.2f} req/s ({:.1f}% of requests "
        "meet both goals)\n",
        c.replicas, c.disaggregated.on() ? "units" : "replicas", layout_name(c.replica, c.disaggregated), c.gpus,
        c.nodes, c.fleet.goodput_rps, 100 * c.fleet.slo_attainment);
    if (peak_factor > 0) {
      out += fmt::format("\n# peak: {:g} x {} = {:g} req/s\n", peak_factor, offered, offered * peak_factor);
      if (at_peak.chosen < 0) {
        out += "No layout meets the goals at the peak; " + best_reachable(at_peak) + ".\n";
      } else {
        out += fleet_table(at_peak);
        const auto& p = at_peak.layouts[static_cast<std::size_t>(at_peak.chosen)];
        // Scaling out: the base layout with more replicas; scaling up: the peak's best layout.
        const work::LayoutSizing* out_layout = nullptr;
        for (const auto& l : at_peak.layouts)
          if (l.replica.tp == c.replica.tp && l.disaggregated.on() == c.disaggregated.on() && l.fits) out_layout = &l;
        out += fmt::format("\nThe peak needs {} GPUs, {} more than the {} of the average rate (+{:.0f}%).\n", p.gpus,
                           p.gpus - c.gpus, c.gpus, 100.0 * static_cast<double>(p.gpus - c.gpus) / c.gpus);
        if (out_layout != nullptr)
          out += fmt::format("  scale out: {} x {} = {} GPUs\n", out_layout->replicas,
                             layout_name(out_layout->replica, out_layout->disaggregated), out_layout->gpus);
        for (const auto& l : at_peak.layouts)
          if (l.fits && l.replica.tp > c.replica.tp && l.disaggregated.on() == c.disaggregated.on()) {
            out += fmt::format("  scale up:  {} x {} = {} GPUs\n", l.replicas, layout_name(l.replica, l.disaggregated),
                               l.gpus);
            break;
          }
      }
    }
    return out;
  }
  const work::ReplicaSet set(context, m, r, replicas, disagg, load.input.mean(), bg ? &*bg : nullptr);
  auto run_load = [&](const work::LoadSpec& l, const work::SimulationOptions& o) {
    return set.run(work::generate_requests(l), l.kind == work::ArrivalKind::concurrency ? l.concurrency : 0, o);
  };

  // Curves.
  if (!sweep_rate.empty() || !sweep_concurrency.empty()) {
    if (!sweep_rate.empty() && !sweep_concurrency.empty())
      throw InputError({}, "--sweep-rate", "both sweeps given", "one of --sweep-rate, --sweep-concurrency");
    const bool by_rate = !sweep_rate.empty();
    report::TextTable tab = curve_table(by_rate ? "rate" : "clients");
    nlohmann::json points = nlohmann::json::array();
    const char* flag = by_rate ? "--sweep-rate" : "--sweep-concurrency";
    const std::vector<std::string> values = split_list(by_rate ? sweep_rate : sweep_concurrency);
    if (values.size() > kMaxSweepPoints)
      throw InputError({}, flag, fmt::format("{} points", values.size()),
                       fmt::format("at most {} points in one curve", kMaxSweepPoints));
    // Every point is read and the whole curve's steps counted before the first one runs.
    std::vector<work::LoadSpec> loads;
    work::LoadSpec whole = load;
    whole.kind = work::ArrivalKind::offline;
    whole.requests = 0;
    for (const auto& v : values) {
      work::LoadSpec& l = loads.emplace_back(load);
      if (by_rate) {
        l.kind = work::ArrivalKind::poisson;
        l.rate = parse_number("--sweep-rate", v, 1e-6, 1e7, "positive rates, e.g. 1,2,4,8");
      } else {
        l.kind = work::ArrivalKind::concurrency;
        l.concurrency = parse_whole("--sweep-concurrency", v, 1, kMaxConcurrency);
        if (requests.empty()) l.requests = std::max<long>(1000, 10 * l.concurrency);
      }
      whole.requests += l.requests;
    }
    check_steps(fmt::format("{} x {}", flag, requests.empty() && !by_rate ? "(10 x clients)" : requests_from), whole,
                r.max_batch_tokens);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const work::LoadSpec& l = loads[i];
      const double offered_here = by_rate ? l.rate : 0;
      work::SimulationOptions o = sim;
      o.record_trace = false;
      const auto s = work::summarize(run_load(l, o), offered_here, slo, r.ep == 1);
      curve_row(tab, values[i], s);
      nlohmann::json p = summary_json(s);
      p[by_rate ? "rate" : "concurrency"] = by_rate ? nlohmann::json(offered_here) : nlohmann::json(l.concurrency);
      points.push_back(p);
    }
    if (format == "json")
      return nlohmann::json{{"model", m.name},
                            {"cluster", t.spec().name},
                            {"replicas", replicas},
                            {"gpus", serving_gpus},
                            {"points", points}}
                 .dump(2) +
             "\n";
    return header +
           fmt::format("# {} replica(s) of {}; isl {}, osl {}\n", replicas, layout_name(r), load.input.describe(),
                       load.output.describe()) +
           tab.render();
  }

  const work::ServingRun run = run_load(load, sim);
  const work::ServingSummary s = work::summarize(run, offered, slo, r.ep == 1);
  const work::InferenceCost& cost = set.first();

  if (!trace.empty()) {
    std::vector<work::StepEvent> events;
    events.reserve(run.trace.size());
    for (const auto& it : run.trace)
      events.push_back({fmt::format("engine {}", it.engine),
                        fmt::format("prefill {} tok, decode {}", it.prefill_tokens, it.decode_sequences), it.start_s,
                        it.time.seconds});
    write_whole(trace,
                report::chrome_trace(events, fmt::format("{} on {}", m.name, t.spec().name),
                                     {{"layout", layout_name(r)},
                                      {"iterations", fmt::format("{} of {}", run.trace.size(), run.iterations)}}),
                "--trace");
  }

  // How far held-out published runs on this GPU family fell from the model, per figure.
  const auto& bands = band::BandTable::builtin();
  const std::string gpu_name = t.gpu_spec().name;
  const band::Band throughput_band =
      bands.lookup("serving", band::serving_classes(band::ServingMetric::throughput, gpu_name));
  const band::Band ttft_band = bands.lookup("serving", band::serving_classes(band::ServingMetric::ttft, gpu_name));
  const band::Band tpot_band = bands.lookup("serving", band::serving_classes(band::ServingMetric::tpot, gpu_name));

  if (format == "json") {
    nlohmann::json j = summary_json(s);
    j["bands"] = {
        {"output_tokens_per_s", report::band_json(throughput_band, s.output_tokens_per_s, band::Direction::same)},
        {"ttft_mean_ms", report::band_json(ttft_band, s.ttft_ms.mean, band::Direction::same)},
        {"tpot_mean_ms", report::band_json(tpot_band, s.tpot_ms.mean, band::Direction::same)}};
    j["model"] = m.name;
    j["cluster"] = t.spec().name;
    j["gpu"] = t.gpu_spec().name;
    j["tp"] = r.tp;
    j["pp"] = r.pp;
    j["ep"] = r.ep;
    j["precision"] = work::to_string(r.weights);
    j["kv_dtype"] = work::to_string(r.kv);
    j["replicas"] = replicas;
    j["gpus"] = serving_gpus;
    j["load"] = work::to_string(load.kind);
    if (offered > 0) j["rate"] = offered;
    if (load.concurrency > 0) j["concurrency"] = load.concurrency;
    j["kv_cache_GiB"] = cost.kv_capacity_bytes_per_gpu() / kGiB;
    j["kv_cache_tokens_per_replica"] = cost.kv_capacity_tokens();
    j["weights_GiB_per_gpu"] = cost.weight_bytes_per_gpu() / kGiB;
    j["iterations"] = run.iterations;
    if (disagg.on()) {
      j["disaggregate"] = {{"prefill", disagg.prefill}, {"decode", disagg.decode}};
      j["kv_transfer_ms_mean"] =
          run.kv_transfers > 0 ? 1e3 * run.kv_transfer_s / static_cast<double>(run.kv_transfers) : 0.0;
    }
    if (slo.any()) j["goodput_rps"] = s.goodput_rps;
    j["assumptions"] = cost.assumptions();
    return j.dump(2) + "\n";
  }

  std::string out = header;
  std::string load_text;
  switch (load.kind) {
    case work::ArrivalKind::poisson: load_text = fmt::format("Poisson {} req/s", offered); break;
    case work::ArrivalKind::concurrency: load_text = fmt::format("{} concurrent clients", load.concurrency); break;
    case work::ArrivalKind::offline: load_text = "offline (all at once)"; break;
    case work::ArrivalKind::trace: load_text = "trace " + arrivals; break;
  }
  out += fmt::format("# {} {} of {} = {} GPUs; {} requests, {}; isl {}, osl {}\n", replicas,
                     disagg.on() ? "unit(s)" : "replica(s)", layout_name(r, disagg), serving_gpus, s.requests,
                     load_text, load.input.describe(), load.output.describe());
  out += fmt::format("# memory per GPU: {}\n", cost.describe());
  out += fmt::format("Throughput        {:.0f} output tok/s ({:.0f} per GPU), {:.2f} req/s, {:.0f} input tok/s\n",
                     s.output_tokens_per_s, s.output_tokens_per_s / static_cast<double>(serving_gpus), s.requests_per_s,
                     s.input_tokens_per_s);
  out += fmt::format("  band            {}\n", band::describe(throughput_band, band::Direction::same));
  report::TextTable lat({"", "mean", "p50", "p90", "p99"},
                        std::vector<report::TextTable::Align>(5, report::TextTable::Align::right));
  auto row = [&](const char* name, const work::Distribution& d) {
    lat.add_row({name, ms(d.mean), ms(d.p50), ms(d.p90), ms(d.p99)});
  };
  row("TTFT (ms)", s.ttft_ms);
  row("TPOT (ms)", s.tpot_ms);
  row("E2E (ms)", s.e2e_ms);
  out += lat.render();
  out += fmt::format("  bands of the means: TTFT {}, TPOT {}\n", band::describe(ttft_band, band::Direction::same),
                     band::describe(tpot_band, band::Direction::same));
  out += fmt::format(
      "Batch             up to {} sequences (mean {:.1f}); KV cache peak {:.0f}%, mean {:.0f}%; {} "
      "preemptions; queue up to {}\n",
      s.max_batch, s.mean_batch, 100 * s.kv_peak, 100 * s.kv_mean, s.preemptions, s.max_waiting);
  out += fmt::format("Bound             {}: {}\n", s.bound, s.detail);
  if (const work::KvTransfer* x = set.transfer(); x != nullptr && run.kv_transfers > 0)
    out += fmt::format(
        "KV transfer       {:.2f} ms per request on average ({:.0f} KiB per GPU pair per prompt token "
        "x {:.0f}; contention x{:.2f}{})\n",
        1e3 * run.kv_transfer_s / static_cast<double>(run.kv_transfers), x->bytes_per_token_per_gpu() / 1024.0,
        load.input.mean(), x->contention(), bg ? " with the background job" : "");
  if (s.overloaded)
    out += fmt::format(
        "Overloaded        arrivals at {} req/s outpace service at {:.2f} req/s (x{:.2f}); the queue "
        "reached {} requests\n",
        offered, s.requests_per_s, s.overload_factor, s.max_waiting);
  if (slo.any())
    out += fmt::format("Goodput           {:.2f} req/s meet both goals ({:.1f}%)\n", s.goodput_rps,
                       100 * s.slo_attainment);
  for (const auto& a : cost.assumptions()) out += "  assumption: " + a + "\n";
  if (!trace.empty())
    out += fmt::format("Trace             {} ({} of {} iterations)\n", trace, run.trace.size(), run.iterations);
  return out;
}

}  // namespace gf::cli
