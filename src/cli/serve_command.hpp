#pragma once
// `gpufabric serve`: a model served on a cluster by replicas of one layout (TP x PP), under a
// load (Poisson rate, fixed concurrency, offline, or a trace of arrivals): throughput, TTFT, TPOT
// and end-to-end percentiles, KV-cache occupancy, the batch reached and the bound; the
// throughput-latency curve over rates or concurrencies; and, with latency goals and a rate, the
// fleet that serves it (layout, replicas, GPUs, nodes, goodput) and what a peak costs.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/cluster_options.hpp"

namespace gf::cli {

struct ServeOptions {
  ClusterOptions cluster;
  std::string model, model_file;
  std::string tp = "1", pp = "1", ep = "1", gpus;
  std::string precision = "bf16", kv_dtype;
  std::string admission = "preempt";
  std::string kv_free_fraction;
  std::string gpu_memory_utilization = "0.9", max_batch_tokens = "8192", max_seqs = "256", block_size = "16";
  bool no_chunked_prefill = false;
  std::string rate, concurrency, offline, arrivals;
  std::string isl = "1024", osl = "256";
  std::string requests, duration, seed = "0", ramp_up;
  std::string slo_ttft, slo_tpot, slo_percentile = "90", peak;
  std::string sweep_rate, sweep_concurrency;
  std::string disaggregate, background, mig;
  std::string format = "table";
  std::string trace;

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
};

// "500ms", "1s", "250us", or a bare number of milliseconds; an InputError naming `flag` otherwise.
double parse_duration_s(const std::string& flag, const std::string& text);

}  // namespace gf::cli
