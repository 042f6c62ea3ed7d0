#pragma once
// The saved profile format (JSON, schema "gpufabric-probe" version 1). Field names carry their
// units: copy_GBps (1e9 bytes/s, as nccl-tests), speed_Gbps (1e9 bits/s), latency_us, *_bytes.
#include <nlohmann/json.hpp>
#include <string>

#include "probe/profile.hpp"

namespace gf::probe {

nlohmann::json profile_to_json(const Profile& profile);

// Parses a saved profile. Anything malformed is an InputError naming `file` and the field's
// path, e.g. "memory[0].copy_GBps".
Profile profile_from_json(const std::string& text, const std::string& file);

}  // namespace gf::probe
