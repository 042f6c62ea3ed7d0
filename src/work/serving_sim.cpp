#include "work/serving_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <random>

#include "core/error.hpp"
#include "work/kv_transfer.hpp"

namespace gf::work {

namespace {

struct Live {
  std::size_t request = 0;  // index into the request list
  long target = 0;          // tokens to hold in the KV cache before the next token is sampled
  long computed = 0;        // tokens whose KV is in the cache
  long generated = 0;
  long blocks = 0;
  int preemptions = 0;
  long queue_seen = 0;  // requests waiting (all engines) when it arrived
  bool first_token_seen = false;
  double first_token_s = 0;
};

enum class Role { mixed, prefill, decode };

struct Engine {
  InferenceCost* cost = nullptr;
  Role role = Role::mixed;
  long capacity_blocks = 0;
  long used_blocks = 0;
  double clock = 0;
  std::vector<Live> running;  // in admission order
  std::deque<Live> waiting;
  [[nodiscard]] bool idle() const { return running.empty() && waiting.empty(); }
  [[nodiscard]] std::size_t outstanding() const { return running.size() + waiting.size(); }
};

// The load balancer in front of the replicas, as Envoy's LEAST_REQUEST policy picks a host
// (source/extensions/load_balancing_policies/least_request/least_request_lb.cc,
// unweightedHostPickNChoices, v1.35.0): `choice_count` hosts drawn at random, with replacement,
// and the one with the fewest active requests taken, the first drawn on a tie. choice_count
// defaults to 2 (least_request.proto: "two-choice selection"), the "power of two choices" that
// SGLang's router also offers (sgl-router policies/power_of_two.rs). Drawing at random matters:
// a balancer that scans for the fewest and breaks ties by position sends every arrival to the
// replica whose cohort just finished, so requests that started together keep finishing together
// and the cohorts grow over a run (fixed lengths make every request of a cohort end in the same
// iteration): TTFT p90 at half load rose from about 90 ms over the first minute to 270 ms after
// three.
constexpr int kBalancerChoices = 2;

Engine* least_request(const std::vector<Engine*>& pool, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> any(0, pool.size() - 1);
  Engine* best = pool[any(rng)];
  for (int c = 1; c < kBalancerChoices; ++c)
    if (Engine* other = pool[any(rng)]; other->outstanding() < best->outstanding()) best = other;
  return best;
}

long blocks_for(long tokens, long block) { return (tokens + block - 1) / block; }

// Every request must fit in one engine's KV cache alone. The message blames the length that is
// too long by itself, or both when only their sum is. (Lengths are bounded where they are read,
// kMaxRequestTokens, so the sums cannot overflow.)
void check_fits(const std::vector<Request>& requests, const std::vector<Engine>& engines, const SimulationOptions& o) {
  const Engine* small = &engines.front();
  for (const auto& e : engines)
    if (e.capacity_blocks < small->capacity_blocks) small = &e;
  const long block = o.scheduler.block_tokens;
  const long capacity = small->capacity_blocks * block;
  const Request* longest = &requests.front();
  for (const auto& r : requests)
    if (r.input + r.output > longest->input + longest->output) longest = &r;
  const long total = longest->input + longest->output;
  if (blocks_for(total, block) <= small->capacity_blocks) return;
  long max_input = 0, max_output = 0;
  for (const auto& r : requests) {
    max_input = std::max(max_input, r.input);
    max_output = std::max(max_output, r.output);
  }
  const bool input_alone = blocks_for(max_input, block) > small->capacity_blocks;
  const bool output_alone = blocks_for(max_output, block) > small->capacity_blocks;
  const std::string field = input_alone && !output_alone   ? o.input_field
                            : output_alone && !input_alone ? o.output_field
                                                           : o.input_field + " + " + o.output_field;
  throw InputError({}, field,
                   fmt::format("a request of {} input + {} output = {} tokens exceeds the KV cache of one engine, {} "
                               "tokens ({})",
                               longest->input, longest->output, total, capacity, small->cost->describe()),
                   "shorter requests, a larger TP, fp8 KV (--kv-dtype fp8) or a higher --gpu-memory-utilization");
}

// Draws `work` from the budget; throws when it has run out.
void spend(WorkBudget& budget, double work, const ServingRun& run, const Engine& e, const SimulationOptions& o) {
  budget.left -= work;
  if (budget.left >= 0) return;
  const long block = o.scheduler.block_tokens;
  throw SimulationTooLarge(
      {}, o.requests_field,
      fmt::format("{} outgrew the work budget of {:.0f} steps (about 4 s); the last ran {} iterations of {} "
                  "engine(s), up to {} requests in one iteration, a KV cache of {} tokens per engine",
                  budget.runs > 1 ? fmt::format("the {} simulations of this command", budget.runs) : "the simulation",
                  kMaxSimulationWork, run.iterations, run.engines, run.max_batch, e.capacity_blocks * block),
      "fewer --requests (or a shorter --duration), shorter --isl/--osl, fewer --gpus, or room for larger "
      "batches: a larger --max-batch-tokens or --max-seqs, a larger TP, or fp8 KV (--kv-dtype fp8)");
}

}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, p);
}

ServingRun simulate_serving(const std::vector<InferenceCost*>& replicas, const std::vector<Request>& requests,
                            long concurrency, const SimulationOptions& options, const Disaggregation* disaggregation) {
  const SchedulerOptions& s = options.scheduler;
  ServingRun run;
  if (replicas.empty() || requests.empty()) return run;
  if (s.max_batch_tokens < 1 || s.max_seqs < 1 || s.block_tokens < 1)
    throw InputError({}, "--max-batch-tokens", "scheduler limits below 1",
                     "positive --max-batch-tokens and --max-seqs");

  const long prefill_replicas = disaggregation != nullptr ? disaggregation->prefill_replicas : 0;
  if (disaggregation != nullptr && (prefill_replicas < 1 || prefill_replicas >= static_cast<long>(replicas.size()) ||
                                    disaggregation->transfer == nullptr))
    throw InputError({}, "--disaggregate", fmt::format("{} prefill of {} instances", prefill_replicas, replicas.size()),
                     "at least one prefill and one decode instance");
  std::vector<Engine> engines;
  for (std::size_t i = 0; i < replicas.size(); ++i) {
    InferenceCost* c = replicas[i];
    const long pp = c->replica().pp;
    for (long v = 0; v < pp; ++v) {
      Engine e;
      e.cost = c;
      if (disaggregation != nullptr) e.role = static_cast<long>(i) < prefill_replicas ? Role::prefill : Role::decode;
      e.capacity_blocks = c->kv_capacity_tokens() / pp / s.block_tokens;
      engines.push_back(std::move(e));
    }
  }
  run.engines = static_cast<int>(engines.size());
  run.closed_loop = concurrency > 0;
  check_fits(requests, engines, options);
  WorkBudget own;
  WorkBudget& work_budget = options.budget != nullptr ? *options.budget : own;
  ++work_budget.runs;
  if (!s.chunked_prefill)
    for (const auto& r : requests)
      if (r.input > s.max_batch_tokens)
        throw InputError({}, "--max-batch-tokens",
                         fmt::format("a prompt of {} tokens exceeds the budget of {} without chunked prefill", r.input,
                                     s.max_batch_tokens),
                         "--max-batch-tokens at least the longest prompt, or chunked prefill");

  // Arrivals: the given times, except under a fixed concurrency, where request i > C arrives
  // when the (i - C)-th completes.
  std::vector<double> arrival(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) arrival[i] = requests[i].arrival_s;
  const std::size_t open =
      concurrency > 0 ? std::min<std::size_t>(requests.size(), static_cast<std::size_t>(concurrency)) : requests.size();
  std::size_t released = open;  // requests whose arrival time is known
  std::size_t next = 0;         // next request to dispatch
  // Under concurrency, completions release arrivals out of index order only in time: keep a
  // queue of (time, index) for released ones.
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>>
      pending;
  if (concurrency > 0) {
    for (std::size_t i = 0; i < open; ++i) pending.emplace(arrival[i], i);
  }
  auto next_arrival = [&]() -> double {
    if (concurrency > 0) return pending.empty() ? std::numeric_limits<double>::infinity() : pending.top().first;
    return next < requests.size() ? arrival[next] : std::numeric_limits<double>::infinity();
  };
  // Requests on their way from a prefill instance to a decode instance: (ready time, slot).
  std::vector<Live> in_transit;
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>>
      handoffs;
  auto pop_arrival = [&]() -> std::size_t {
    if (concurrency > 0) {
      const std::size_t i = pending.top().second;
      arrival[i] = pending.top().first;
      pending.pop();
      return i;
    }
    return next++;
  };

  run.first_arrival_s = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < open; ++i) run.first_arrival_s = std::min(run.first_arrival_s, arrival[i]);
  run.requests.reserve(requests.size());
  double batch_time = 0, kv_time = 0;
  std::vector<std::pair<std::size_t, long>> chunk;  // an iteration's running index and tokens, reused
  std::size_t total_waiting = 0;
  // The balancer's pools: where new requests enter, and (disaggregated) where their KV caches go.
  std::vector<Engine*> entry_pool, decode_pool;
  for (auto& x : engines) (x.role == Role::decode ? decode_pool : entry_pool).push_back(&x);
  std::mt19937_64 balancer(options.seed);

  for (;;) {
    // The busy engine that is free first.
    Engine* e = nullptr;
    for (auto& x : engines)
      if (!x.idle() && (e == nullptr || x.clock < e->clock)) e = &x;
    const double t_external = next_arrival();
    const double t_handoff = handoffs.empty() ? std::numeric_limits<double>::infinity() : handoffs.top().first;
    const double t_arrival = std::min(t_external, t_handoff);
    if (e == nullptr && std::isinf(t_arrival)) break;
    if (e == nullptr || t_arrival <= e->clock) {
      const bool handoff = t_handoff < t_external;
      Engine* to = least_request(handoff ? decode_pool : entry_pool, balancer);
      if (to->idle()) to->clock = std::max(to->clock, t_arrival);
      Live l;
      if (handoff) {
        l = in_transit[handoffs.top().second];
        handoffs.pop();
      } else {
        const std::size_t i = pop_arrival();
        l.request = i;
        l.target = requests[i].input;
        l.queue_seen = static_cast<long>(total_waiting);
      }
      to->waiting.push_back(l);
      ++total_waiting;
      spend(work_budget, 2 * kEngineWork * static_cast<double>(engines.size()), run, *to, options);
      run.max_waiting = std::max(run.max_waiting, static_cast<long>(total_waiting));
      continue;
    }

    // Build one iteration on engine e.
    IterationWork w;
    long budget = s.max_batch_tokens;
    chunk.clear();
    auto preempt_last = [&]() {
      Live v = e->running.back();
      e->running.pop_back();
      e->used_blocks -= v.blocks;
      v.blocks = 0;
      v.computed = 0;
      v.target = requests[v.request].input + v.generated;
      ++v.preemptions;
      ++run.preemptions;
      e->waiting.push_front(v);
      ++total_waiting;
    };
    for (std::size_t k = 0; k < e->running.size() && budget > 0; ++k) {
      Live& l = e->running[k];
      const long c = l.computed < l.target ? std::min(l.target - l.computed, budget) : 1;
      // Blocks reserved on admission (no-evict) already cover the whole answer.
      const long need = std::max(0L, blocks_for(l.computed + c, s.block_tokens) - l.blocks);
      bool self_preempted = false;
      while (e->used_blocks + need > e->capacity_blocks) {
        if (e->running.size() - 1 == k) {  // it is the most recent itself
          preempt_last();
          self_preempted = true;
          break;
        }
        preempt_last();
      }
      if (self_preempted) break;
      e->used_blocks += need;
      l.blocks += need;
      chunk.emplace_back(k, c);
      budget -= c;
    }
    bool kv_blocked = false;
    while (!e->waiting.empty() && budget > 0 && static_cast<long>(e->running.size()) < s.max_seqs) {
      Live& l = e->waiting.front();
      const long remaining = l.target - l.computed;
      if (!s.chunked_prefill && remaining > budget) break;
      // A request handed over from a prefill instance arrives with its prompt cached: one token.
      const long c = remaining > 0 ? std::min(remaining, budget) : 1;
      const Request& q = requests[l.request];
      // No-evict sets the whole answer aside, except on a prefill instance (the answer goes elsewhere).
      const bool reserve = s.reserve_output && e->role != Role::prefill;
      const long need = blocks_for(reserve ? q.input + q.output : l.computed + c, s.block_tokens) - l.blocks;
      if (e->used_blocks + need > e->capacity_blocks) {
        kv_blocked = true;
        break;
      }
      e->used_blocks += need;
      l.blocks += need;
      e->running.push_back(l);
      e->waiting.pop_front();
      --total_waiting;
      chunk.emplace_back(e->running.size() - 1, c);
      budget -= c;
    }
    const bool seqs_blocked = !e->waiting.empty() && static_cast<long>(e->running.size()) >= s.max_seqs;

    for (const auto& [k, c] : chunk) {
      const Live& l = e->running[k];
      if (l.computed < l.target) {
        w.prefill_tokens += c;
        w.prefill_attention += static_cast<double>(c) * static_cast<double>(l.computed) +
                               static_cast<double>(c) * static_cast<double>(c + 1) / 2;
        if (l.computed + c == l.target) ++w.prefill_sequences;
      } else {
        ++w.decode_sequences;
        w.decode_context += static_cast<double>(l.computed + 1);
      }
    }
    // Picking this engine looked at all of them; the iteration's steps are its chunks.
    spend(work_budget,
          kEngineWork * static_cast<double>(engines.size()) + static_cast<double>(chunk.size()) + kIterationWork, run,
          *e, options);
    const IterationTime it = e->cost->iteration(w);
    const double start = e->clock;
    const double end = start + it.seconds;
    e->clock = end;

    // Advance the requests; completed ones leave (back to front keeps indices valid).
    for (const auto& [k, c] : chunk) {
      Live& l = e->running[k];
      const bool sampled = l.computed < l.target ? l.computed + c == l.target : true;
      l.computed += c;
      if (sampled) {
        ++l.generated;
        if (!l.first_token_seen) {
          l.first_token_seen = true;
          l.first_token_s = end;
        }
      }
    }
    std::size_t kept = 0;
    for (std::size_t k = 0; k < e->running.size(); ++k) {
      Live& l = e->running[k];
      const Request& r = requests[l.request];
      if (l.generated >= r.output) {
        e->used_blocks -= l.blocks;
        RequestRecord rec;
        rec.arrival_s = arrival[l.request];
        rec.first_token_s = l.first_token_s;
        rec.finish_s = end;
        rec.input = r.input;
        rec.output = r.output;
        rec.preemptions = l.preemptions;
        rec.queue_seen = l.queue_seen;
        run.requests.push_back(rec);
        run.last_finish_s = std::max(run.last_finish_s, end);
        if (concurrency > 0 && released < requests.size()) pending.emplace(end, released++);
      } else if (e->role == Role::prefill && l.computed >= l.target) {
        // Prompt done, first token out: the KV cache leaves for a decode instance.
        e->used_blocks -= l.blocks;
        Live moved = l;
        moved.blocks = 0;
        const double transfer = disaggregation->transfer->seconds(l.computed);
        ++run.kv_transfers;
        run.kv_transfer_s += transfer;
        in_transit.push_back(moved);
        handoffs.emplace(end + transfer, in_transit.size() - 1);
      } else {
        if (kept != k) e->running[kept] = l;
        ++kept;
      }
    }
    e->running.resize(kept);

    const long batch = static_cast<long>(chunk.size());
    ++run.iterations;
    run.max_batch = std::max(run.max_batch, batch);
    run.busy_s += it.seconds;
    run.compute_s += it.compute;
    run.memory_s += it.memory;
    run.communication_s += it.communication;
    if (kv_blocked) run.kv_blocked_s += it.seconds;
    if (seqs_blocked) run.seqs_blocked_s += it.seconds;
    batch_time += static_cast<double>(batch) * it.seconds;
    const double kv =
        e->capacity_blocks > 0 ? static_cast<double>(e->used_blocks) / static_cast<double>(e->capacity_blocks) : 0.0;
    kv_time += kv * it.seconds;
    run.kv_peak = std::max(run.kv_peak, kv);
    if (options.record_trace && static_cast<long>(run.trace.size()) < options.trace_limit)
      run.trace.push_back({static_cast<int>(e - engines.data()), start, it, w.prefill_tokens, w.decode_sequences,
                           e->used_blocks * s.block_tokens});
  }
  if (run.busy_s > 0) {
    run.mean_batch = batch_time / run.busy_s;
    run.kv_mean = kv_time / run.busy_s;
  }
  return run;
}

}  // namespace gf::work
