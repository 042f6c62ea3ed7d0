#pragma once
// The requests a serving simulation replays: when each arrives and how many tokens it brings
// and asks for. Poisson arrivals at a rate, everything at once (offline), a trace file, or a
// fixed number of clients that each send their next request when the last one returns (that
// last one is generated inside the simulation, serving_sim.hpp).
//
// Trace files are CSV: `arrival_s,input_tokens,output_tokens`, one request per line, arrival
// times non-decreasing, a header line allowed, `#` comments ignored. Histogram files give a
// length distribution: `tokens,weight` per line.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gf::work {

// The longest prompt or answer one request may have, in tokens: 2^20, eight times the longest
// context of any model in the catalog (131,072) and as long as the million-token contexts of the
// longest-context models served today. It keeps input + output, and every KV block count made
// from them, far from overflowing a long, and it keeps one request's simulation (an iteration
// per output token at worst) well under a second.
inline constexpr long kMaxRequestTokens = 1L << 20;
// The requests one simulated run may hold (--requests, --offline, --rate x --duration, the rows
// of an --arrivals file): 2^20 take about 100 MB of request and result records on top of the
// program's own (the steps they ask for are bounded apart, kMaxSimulatedSteps).
inline constexpr long kMaxRequests = 1L << 20;
// The steps one command may plan to simulate: a step is one sequence's decode token, or one
// prefill chunk, in one iteration. The simulator takes about 15 ns a step at a full batch, so
// 2^27 steps are about 2 s (half a million requests of the default 1024 + 256 tokens).
inline constexpr double kMaxSimulatedSteps = static_cast<double>(1L << 27);
// Histogram and trace files are read whole: 64 MiB holds 2^20 rows of 64 bytes.
inline constexpr long kMaxLoadFileBytes = 64L << 20;

struct Request {
  double arrival_s = 0;
  long input = 0;
  long output = 0;
};

// A length: fixed, or drawn from a histogram of (tokens, weight).
class LengthDistribution {
public:
  LengthDistribution() = default;
  explicit LengthDistribution(long fixed) : fixed_(fixed) {}
  // Reads `tokens,weight` lines (InputError at file:line when malformed).
  static LengthDistribution from_histogram(const std::string& text, const std::string& file);

  [[nodiscard]] long sample(std::mt19937_64& rng) const;
  [[nodiscard]] double mean() const;
  [[nodiscard]] long max() const;
  [[nodiscard]] std::string describe() const;

private:
  long fixed_ = 0;
  std::vector<std::pair<long, double>> bins_;  // tokens, cumulative weight
};

enum class ArrivalKind { poisson, concurrency, offline, trace };
const char* to_string(ArrivalKind k);

struct LoadSpec {
  ArrivalKind kind = ArrivalKind::offline;
  double rate = 0;       // requests per second (poisson)
  long concurrency = 0;  // clients (concurrency)
  // Concurrency: client k sends its first request at k x ramp_up_s / clients (0: all at once).
  double ramp_up_s = 0;
  long requests = 1000;  // how many requests in all
  LengthDistribution input{1024};
  LengthDistribution output{256};
  std::uint64_t seed = 0;
  std::vector<Request> trace;  // kind trace
};

// The requests of a load, sorted by arrival. For `concurrency` the first `concurrency` arrive
// over the ramp-up (all at 0 without one) and the simulation re-times the others.
std::vector<Request> generate_requests(const LoadSpec& load);

// The steps (see kMaxSimulatedSteps) a load asks for when batches are full: per request its output
// tokens and its prompt's chunks of `max_batch_tokens`. Trace loads count their rows exactly.
double planned_steps(const LoadSpec& load, long max_batch_tokens);

// Reads a trace file (InputError at file:line when malformed).
std::vector<Request> parse_trace(const std::string& text, const std::string& file);

}  // namespace gf::work
