// NCCL parameter files (data/comm/nccl.yaml format).
#include "comm/nccl_params.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] { (void)gf::comm::parse_nccl_params(gf::fuzz::text_of(data, size), "fuzz.yaml"); });
}
