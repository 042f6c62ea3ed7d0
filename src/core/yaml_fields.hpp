#pragma once
// Typed, checked access to one YAML mapping. Every failure becomes an InputError naming the
// file, line and field; keys outside the allowed set are rejected with a "did you mean" hint,
// because a misspelt key that is silently ignored is a wrong answer later.
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace gf {

// Parses YAML text; a syntax error becomes an InputError at the parser's line.
YAML::Node parse_yaml(const std::string& text, const std::string& file);
// The whole text of a file; anything but a readable regular file is an InputError for `field`
// (the option or key that named it).
std::string read_text_file(const std::string& path, const std::string& field);

SourceLocation location_of(const YAML::Node& node, const std::string& file);

class Fields {
public:
  // `path` names this mapping in messages, e.g. "gpus[h100-sxm5]" or "node". Beside every
  // allowed key X, "X_source" and "X_note" are accepted as its citation and comment.
  Fields(const YAML::Node& map, std::string file, std::string path, std::initializer_list<const char*> allowed);

  [[nodiscard]] bool has(const char* key) const;
  [[nodiscard]] std::string text(const char* key) const;
  [[nodiscard]] std::string text_or(const char* key, const std::string& fallback) const;
  [[nodiscard]] double number(const char* key) const;
  [[nodiscard]] double positive(const char* key) const;  // > 0
  [[nodiscard]] double positive_or(const char* key, double fallback) const;
  [[nodiscard]] double fraction(const char* key) const;  // in (0, 1]
  [[nodiscard]] long integer(const char* key, long min, long max) const;
  [[nodiscard]] long integer_or(const char* key, long min, long max, long fallback) const;
  [[nodiscard]] bool flag(const char* key) const;
  [[nodiscard]] bool flag_or(const char* key, bool fallback) const;
  [[nodiscard]] std::string choice(const char* key, const std::vector<std::string>& options) const;
  [[nodiscard]] YAML::Node node(const char* key) const;  // required
  [[nodiscard]] YAML::Node node_or_null(const char* key) const;
  [[nodiscard]] std::vector<std::string> text_list(const char* key) const;

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::string field(const char* key) const;  // "path.key"
  [[nodiscard]] SourceLocation where(const char* key) const;
  [[nodiscard]] SourceLocation where() const { return location_of(map_, file_); }
  [[noreturn]] void fail(const char* key, const std::string& problem, const std::string& valid = {}) const;

private:
  YAML::Node map_;
  std::string file_;
  std::string path_;
};

// Iterates a YAML sequence, failing cleanly when the node is not a list.
std::vector<YAML::Node> as_list(const YAML::Node& node, const std::string& file, const std::string& field);

}  // namespace gf
