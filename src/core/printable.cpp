#include "core/printable.hpp"

#include <fmt/format.h>

#include "core/yaml_fields.hpp"

namespace gf {

namespace {

// The length of the well-formed UTF-8 sequence at the start of `rest`, or 0 where it is not one.
std::size_t utf8_sequence_length(std::string_view rest) {
  const auto lead = static_cast<unsigned char>(rest[0]);
  const std::size_t len = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (len > rest.size()) return 0;
  return invalid_utf8_at(rest.substr(0, len)) == std::string_view::npos ? len : 0;
}

}  // namespace

std::string printable(std::string_view text, bool keep_layout) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\t') {
      if (keep_layout) {
        out += static_cast<char>(c);
      } else {
        out += c == '\n' ? "\\n" : "\\t";
      }
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t len = utf8_sequence_length(text.substr(i)); len == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      // U+0080..U+009F: the C1 controls (CSI among them), encoded as C2 80..C2 9F.
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
      i += 2;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace gf
