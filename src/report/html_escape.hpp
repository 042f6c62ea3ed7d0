#pragma once
// Escapes for HTML text and quoted attributes alike, so one function serves both (and SVG, which
// the HTML parser reads with the same rules).
#include <string>
#include <string_view>

namespace gf::report {

std::string html_escape(std::string_view s);

}  // namespace gf::report
