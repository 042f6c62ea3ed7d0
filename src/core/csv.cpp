#include "core/csv.hpp"

namespace gf {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r#") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

std::string comment_line(const char* kind, std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return std::string("# ") + kind + ": " + text + "\n";
}

}  // namespace

std::string csv_comment_lines(const Messages& m) {
  std::string out;
  for (const auto& w : m.warnings) out += comment_line("warning", w);
  for (const auto& n : m.notes) out += comment_line("note", n);
  return out;
}

}  // namespace gf
