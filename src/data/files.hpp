#pragma once
// The one lookup of the embedded data files (data/embedded.hpp): by path, through a map built
// once, instead of every reader scanning the whole list and comparing paths.
#include <optional>
#include <string_view>
#include <vector>

#include "data/embedded.hpp"

namespace gf::data {

// The text of the embedded file at `path` (e.g. "data/comm/nccl.yaml"); throws std::logic_error
// when it is not built in, which is a build error, never a user's.
std::string_view file(std::string_view path);
// The text of the embedded file at `path`, or nullopt when it is not built in.
std::optional<std::string_view> find(std::string_view path);
// Every embedded file whose path starts with `prefix` and ends with `suffix`, in path order
// (e.g. the presets: files_under("data/presets/", ".yaml")).
std::vector<EmbeddedFile> files_under(std::string_view prefix, std::string_view suffix = "");

}  // namespace gf::data
