#pragma once
// A serving engine stepped iteration by iteration, as vLLM's, SGLang's and TensorRT-LLM's
// schedulers run it: continuous batching under a token budget (max_batch_tokens) and a sequence
// limit (max_seqs); running requests first (one decode token each, or their next prompt chunk),
// then waiting requests first come first served while the budget, the sequence limit and the
// paged KV cache allow (chunked prefill splits a prompt across iterations). A decode that needs
// a KV block when none is free preempts the most recently admitted request, which gives its
// blocks back and recomputes its prompt and generated tokens later (vLLM's recompute
// preemption).
//
// Replicas sit behind one load balancer that sends each request to the less loaded (fewest
// outstanding requests) of two replicas drawn at random under the run's seed, as Envoy's
// LEAST_REQUEST policy does. A pipeline-parallel replica runs as PP engines (one batch per stage in
// flight), each holding 1/PP of its KV cache.
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "work/inference_cost.hpp"
#include "work/serving_load.hpp"

namespace gf::work {

class KvTransfer;

struct SchedulerOptions {
  long max_batch_tokens = 8192;
  long max_seqs = 256;
  bool chunked_prefill = true;
  long block_tokens = 16;  // KV cache page size (vLLM's default block size)
  // Admit a request only when the KV blocks of its whole answer can be set aside
  // (TensorRT-LLM's GUARANTEED_NO_EVICT capacity policy): no preemption, fewer in flight.
  // Otherwise blocks are taken as tokens arrive and preemption frees them (vLLM).
  bool reserve_output = false;
};

// What happened to one request. Times in seconds from the simulation's start.
struct RequestRecord {
  double arrival_s = 0;
  double first_token_s = 0;
  double finish_s = 0;
  long input = 0;
  long output = 0;
  int preemptions = 0;
  long queue_seen = 0;  // requests waiting for admission, all engines together, when it arrived
  [[nodiscard]] double ttft() const { return first_token_s - arrival_s; }
  [[nodiscard]] double e2e() const { return finish_s - arrival_s; }
  // Time per output token after the first (benchmark clients' TPOT); 0 for one-token answers.
  [[nodiscard]] double tpot() const {
    return output > 1 ? (finish_s - first_token_s) / static_cast<double>(output - 1) : 0.0;
  }
};

// One iteration of one engine, for --trace.
struct IterationRecord {
  int engine = 0;
  double start_s = 0;
  IterationTime time;
  long prefill_tokens = 0;
  long decode_sequences = 0;
  long kv_tokens = 0;  // KV cache in use after the iteration
};

struct ServingRun {
  std::vector<RequestRecord> requests;  // completed, in completion order
  double first_arrival_s = 0;
  double last_finish_s = 0;
  long iterations = 0;
  long max_batch = 0;     // most sequences in one iteration
  double mean_batch = 0;  // sequences per iteration, time-weighted
  double kv_peak = 0;     // fraction of KV capacity, highest after any iteration
  double kv_mean = 0;     // time-weighted over busy time
  long preemptions = 0;
  long max_waiting = 0;  // longest queue (all engines)
  double busy_s = 0;     // engine-seconds of iterations
  double compute_s = 0;  // of which each bound, summed over engines
  double memory_s = 0;
  double communication_s = 0;
  double kv_blocked_s = 0;    // iterations that left a waiting request out for want of KV blocks
  double seqs_blocked_s = 0;  // ... for want of a sequence slot (max_seqs)
  int engines = 0;
  bool closed_loop = false;            // a fixed concurrency: arrivals wait on completions
  long kv_transfers = 0;               // disaggregated: requests handed from prefill to decode
  double kv_transfer_s = 0;            // ... and the seconds their KV caches took to move, summed
  std::vector<IterationRecord> trace;  // when asked for (first `trace_limit` iterations)
  [[nodiscard]] double makespan() const { return last_finish_s - first_arrival_s; }
};

// The work one command may spend simulating, in units of about 7 ns of this simulator's time on
// one core: a step (kMaxSimulatedSteps) is one unit, an iteration kIterationWork more (pricing
// it, about 90 ns), and each engine looked at to pick the next event kEngineWork (about 3 ns). It
// is four times the steps one run may plan, so that full batches never meet it and a fleet
// sizing's hundred light runs at the lengths people serve fit (a sizing at --osl 4096 on a DGX
// H100 needs about 4.7e8); it stops runs whose batches stay small (a KV cache with room for a few
// requests, a small --max-batch-tokens, thousands of engines, preemptions recomputing) after
// about 4 s instead of minutes.
inline constexpr double kMaxSimulationWork = 4 * kMaxSimulatedSteps;
inline constexpr double kIterationWork = 12;
inline constexpr double kEngineWork = 0.5;

// What is left of that work, shared by every run of one command (a sweep, a fleet sizing).
struct WorkBudget {
  double left = kMaxSimulationWork;
  long runs = 0;  // simulations that drew from it, for the message when it runs out
};

// The budget ran out: a bad input like any other, but fleet sizing must not take it for one
// layout's failure and go on to the next.
class SimulationTooLarge : public InputError {
public:
  using InputError::InputError;
};

struct SimulationOptions {
  SchedulerOptions scheduler;
  bool record_trace = false;
  long trace_limit = 200000;
  // What the input and output lengths are called in messages: flags, or an --arrivals file's columns.
  std::string input_field = "--isl";
  std::string output_field = "--osl";
  std::string requests_field = "--requests";  // what sets the number of requests, for the budget's message
  WorkBudget* budget = nullptr;               // nullptr: the run has a budget of its own
  std::uint64_t seed = 0;                     // the balancer's random draws (--seed)
};

// Disaggregated serving: the first `prefill_replicas` replicas run prompts only; when a prompt's
// first token is out, its KV cache moves (`transfer`) to the decode replica with the fewest
// requests of two drawn at random (the balancer above), which generates the rest. TTFT is the prefill's; TPOT the
// decode's.
struct Disaggregation {
  long prefill_replicas = 0;
  const KvTransfer* transfer = nullptr;
};

// Runs `requests` (sorted by arrival) on the replicas, each priced by its own cost model (the
// replicas' GPUs may sit on different links). `concurrency` > 0: only the first `concurrency`
// requests arrive at their time; each later one is sent when a previous one completes.
// Throws InputError when a request cannot fit in one engine's KV cache even alone.
ServingRun simulate_serving(const std::vector<InferenceCost*>& replicas, const std::vector<Request>& requests,
                            long concurrency, const SimulationOptions& options,
                            const Disaggregation* disaggregation = nullptr);

// Percentile with linear interpolation between order statistics (numpy's default, as vLLM's and
// SGLang's benchmark clients compute them). `values` need not be sorted.
double percentile(std::vector<double> values, double p);
// The same on values already sorted ascending (no copy, no sort).
double percentile_sorted(const std::vector<double>& sorted, double p);

}  // namespace gf::work
