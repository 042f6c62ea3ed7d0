#pragma once
// Helpers the importers share: line numbers from byte offsets, and the name a file gives a cluster.
#include <cstddef>
#include <string>

namespace gf::topo::import {

// The 1-based line of byte `offset` in `text`.
int line_at(const std::string& text, std::ptrdiff_t offset);

// File content quoted in a message: printable ASCII only (anything else as '?'), at most 40
// characters, so an error about a binary or mis-encoded file is still valid UTF-8.
std::string shown(const std::string& text);

// A cluster name from a file path: its base name without extension, lower case, [a-z0-9-] only.
std::string cluster_name_of(const std::string& path);

}  // namespace gf::topo::import
