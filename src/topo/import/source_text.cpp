#include "topo/import/source_text.hpp"

#include <algorithm>
#include <cctype>

namespace gf::topo::import {

int line_at(const std::string& text, std::ptrdiff_t offset) {
  const auto end =
      static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(offset, 0, static_cast<std::ptrdiff_t>(text.size())));
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
}

std::string shown(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (out.size() == 40) return out + "...";
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out;
}

std::string cluster_name_of(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (const auto dot = base.find('.'); dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  std::string out;
  for (const unsigned char c : base) {
    if (std::isalnum(c))
      out += static_cast<char>(std::tolower(c));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "imported" : out.substr(0, 64);
}

}  // namespace gf::topo::import
