#pragma once
// Data files compiled into the binary, so `gpufabric` works from any directory.
#include <string_view>
#include <vector>

namespace gf::data {

struct EmbeddedFile {
  std::string_view path;  // relative to the repository, e.g. "data/catalog/gpus.yaml"
  std::string_view text;
};

// All embedded files, in path order.
const std::vector<EmbeddedFile>& embedded_files();

}  // namespace gf::data
