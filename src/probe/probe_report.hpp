#pragma once
// Text and JSON renderings of a probe profile and of --compare's expectations. GB/s is 1e9
// bytes per second, as nccl-tests prints it; Gb/s is 1e9 bits per second, as NICs are rated.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "probe/expectations.hpp"
#include "probe/profile.hpp"

namespace gf::probe {

std::string profile_text(const Profile& profile);
std::string compare_text(const std::vector<Expectation>& rows);
nlohmann::json compare_json(const std::vector<Expectation>& rows);

}  // namespace gf::probe
