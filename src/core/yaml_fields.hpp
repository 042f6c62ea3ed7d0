#pragma once
// Typed, checked access to one YAML mapping. Every failure becomes an InputError naming the
// file, line and field; keys outside the allowed set are rejected with a "did you mean" hint,
// because a misspelt key that is silently ignored is a wrong answer later.
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace gf {

// Parses YAML text; a syntax error becomes an InputError at the parser's line. Text that is not
// valid UTF-8 is refused here, at its line and column, because every string read from a file may
// reach JSON output, which must be UTF-8.
//
// A document whose nodes, with each alias counted as the copy it stands for, number more than
// kMaxYamlNodes is refused: nested aliases can expand a few hundred bytes to billions of nodes,
// and every reader walks the expanded tree. The largest file gpufabric ships has about 10,000
// nodes (data/validation/training.yaml): the cap is 100 times that, and the walk to it that
// refuses a document takes about 50 ms. A document that passes bounds every later reader's walk.
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;
YAML::Node parse_yaml(const std::string& text, const std::string& file);
// The whole text of a file; anything but a readable regular file is an InputError for `field`
// (the option or key that named it), saying why (no such file, name too long, a directory, ...).
std::string read_text_file(const std::string& path, const std::string& field);

// Text that is not valid UTF-8 is an InputError at the first bad byte's line and column (for the
// CSV readers: their strings reach JSON output too).
void require_utf8(const std::string& text, const std::string& file);

// The byte offset of the first byte that does not belong to a well-formed UTF-8 sequence
// (overlong forms, surrogates and code points past U+10FFFF included), or npos.
std::size_t invalid_utf8_at(std::string_view text);

// Physically sensible bounds for a figure once converted to SI units (bytes, seconds, bytes per
// second, ...). A figure that is positive and finite can still be absurd (1e300 GB/s overflows to
// infinity on conversion; 1e-300 GB/s makes every transfer take forever): such figures are refused
// where they are read, naming the field, rather than overflowing in a model later.
struct PhysicalRange {
  double min;        // in SI units
  double max;        // in SI units
  const char* unit;  // the SI unit, for messages
};
namespace physical {
inline constexpr PhysicalRange bandwidth{1e3, 1e15, "B/s"};     // 1 kB/s .. 1 PB/s, one link or device
inline constexpr PhysicalRange latency{1e-12, 1e3, "s"};        // 1 ps .. 1000 s
inline constexpr PhysicalRange time_per_item{1e-15, 1e6, "s"};  // per sample or per operation
inline constexpr PhysicalRange size{1, 1e18, "B"};              // 1 byte .. 1 EB
inline constexpr PhysicalRange flops{1, 1e21, "FLOP"};          // work per sample
inline constexpr PhysicalRange flop_rate{1e6, 1e19, "FLOP/s"};  // one device
inline constexpr PhysicalRange frequency{1e3, 1e13, "1/s"};     // transfers or clocks per second
inline constexpr PhysicalRange power{1e-3, 1e6, "W"};           // one device
}  // namespace physical

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
  // A positive figure given in units of `scale` SI units (1e9 for GB/s, 1e-9 for ns), returned
  // converted to SI units and checked against `range` after the conversion.
  [[nodiscard]] double physical(const char* key, double scale, PhysicalRange range) const;
  // The same check for a figure already read from `key` and converted to SI units.
  void check_physical(const char* key, double converted, double scale, PhysicalRange range) const;
  [[nodiscard]] long integer(const char* key, long min, long max) const;
  [[nodiscard]] long integer_or(const char* key, long min, long max, long fallback) const;
  [[nodiscard]] bool flag(const char* key) const;
  [[nodiscard]] bool flag_or(const char* key, bool fallback) const;
  [[nodiscard]] std::string choice(const char* key, const std::vector<std::string>& options) const;
  // The value `key` names in `table` (core/enum_names.hpp; aliases accepted); an unknown name fails
  // as choice() does, listing the canonical names.
  template <typename E, std::size_t N>
  [[nodiscard]] E choice(const char* key, const EnumNames<E, N>& table) const {
    if (const auto v = parse_name(table, text(key))) return *v;
    (void)choice(key, names(table));  // throws: the text is no name of the table
    fail(key, "no value");
  }
  [[nodiscard]] YAML::Node node(const char* key) const;  // required
  [[nodiscard]] YAML::Node node_or_null(const char* key) const;
  [[nodiscard]] std::vector<std::string> text_list(const char* key) const;
  // The mapping under `key`, for reading again after a parser has checked its keys (a range
  // check that names its fields): no key check, so it cannot disagree with the parser's list.
  [[nodiscard]] Fields nested(const char* key) const;

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] std::string field(const char* key) const;  // "path.key"
  [[nodiscard]] SourceLocation where(const char* key) const;
  [[nodiscard]] SourceLocation where() const { return location_of(map_, file_); }
  [[noreturn]] void fail(const char* key, const std::string& problem, const std::string& valid = {}) const;

private:
  struct Unchecked {};
  Fields(Unchecked, const YAML::Node& map, std::string file, std::string path)
      : map_(map), file_(std::move(file)), path_(std::move(path)) {}
  YAML::Node map_;
  std::string file_;
  std::string path_;
};

// Iterates a YAML sequence, failing cleanly when the node is not a list.
std::vector<YAML::Node> as_list(const YAML::Node& node, const std::string& file, const std::string& field);

}  // namespace gf
