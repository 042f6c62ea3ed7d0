// Serving inputs (README, "Input formats"): a request trace (`serve --arrivals`) and a length
// histogram (`serve --isl FILE`), both CSV, read from the same bytes; what parses is sampled.
#include <random>

#include "fuzz_support.hpp"
#include "work/serving_load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gf::fuzz::text_of(data, size);
  gf::fuzz::expect_clean([&] {
    const auto requests = gf::work::parse_trace(text, "fuzz.csv");
    if (requests.empty()) std::abort();  // parse_trace promises at least one request
  });
  return gf::fuzz::expect_clean([&] {
    const auto lengths = gf::work::LengthDistribution::from_histogram(text, "fuzz.csv");
    std::mt19937_64 rng(1);
    for (int i = 0; i < 8; ++i)
      if (lengths.sample(rng) < 1) std::abort();
    (void)lengths.mean();
  });
}
