// nvbandwidth's text output, as `gpufabric calibrate --nvbandwidth FILE` reads it: parse the
// matrices and turn the testcases the model predicts into copy rows.
#include "calib/copy_measurements.hpp"
#include "calib/nvbandwidth_output.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gf::fuzz::expect_clean([&] {
    const auto out = gf::calib::parse_nvbandwidth_output(gf::fuzz::text_of(data, size), "fuzz.txt");
    gf::calib::CalibrationInputs in;
    gf::calib::add_nvbandwidth(out, in);
    nlohmann::json j = nlohmann::json::array();
    for (const auto& n : in.notes) j.push_back(n);
    gf::fuzz::dump(j);
  });
}
