#include "data/files.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace gf::data {

namespace {

// Keyed by path; std::less<> looks string_views up without building a string. Built on first
// use: C++ makes the initialisation of a function-local static thread-safe.
const std::map<std::string_view, std::string_view, std::less<>>& by_path() {
  static const auto map = [] {
    std::map<std::string_view, std::string_view, std::less<>> m;
    for (const auto& f : embedded_files()) m.emplace(f.path, f.text);
    return m;
  }();
  return map;
}

}  // namespace

std::optional<std::string_view> find(std::string_view path) {
  const auto& m = by_path();
  const auto it = m.find(path);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

std::string_view file(std::string_view path) {
  if (const auto text = find(path)) return *text;
  throw std::logic_error(std::string(path) + " is not built into gpufabric (a data file missing from CMakeLists.txt)");
}

std::vector<EmbeddedFile> files_under(std::string_view prefix, std::string_view suffix) {
  std::vector<EmbeddedFile> out;
  const auto& m = by_path();
  for (auto it = m.lower_bound(prefix); it != m.end() && it->first.starts_with(prefix); ++it)
    if (it->first.ends_with(suffix)) out.push_back({it->first, it->second});
  return out;
}

}  // namespace gf::data
