#include "core/yaml_fields.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace gf {

namespace {
std::string n_to_string(double v) { return fmt::format("{:g}", v); }
}  // namespace

std::size_t invalid_utf8_at(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80;  // bounds of the second byte (narrower where overlong or surrogate forms start)
    unsigned hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return i;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

namespace {

SourceLocation location_of(const std::string& text, const std::string& file, std::size_t at) {
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  const std::size_t line_start = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  const std::size_t first = line_start == std::string::npos ? 0 : line_start + 1;
  return {file, line, static_cast<int>(at - first) + 1};  // column in bytes
}

}  // namespace

void require_utf8(const std::string& text, const std::string& file) {
  if (const std::size_t at = invalid_utf8_at(text); at != std::string_view::npos) {
    throw InputError(location_of(text, file, at), "",
                     fmt::format("byte 0x{:02x} is not valid UTF-8", static_cast<unsigned char>(text[at])),
                     "UTF-8 text (save the file as UTF-8)");
  }
}

namespace {

// A walk over the tree as every reader sees it: yaml-cpp keeps one node per anchor and shares it
// at each alias, so a 478-byte document of nested aliases ("billion laughs") loads at once but
// expands to 9^9 nodes for anything that walks it. Each alias occurrence counts as the copy it
// stands for, and the walk stops past kMaxYamlNodes; once a document has passed, every later
// reader's walk is bounded by the same count.
class TreeCheck {
public:
  explicit TreeCheck(const std::string& file) : file_(file) {}

  // yaml-cpp decodes some escapes of double-quoted scalars to single bytes that are not UTF-8
  // ("\_", YAML's no-break space, becomes the byte 0xa0; "\xe9" the byte 0xe9), so valid text can
  // still give strings that JSON output cannot carry. Every key and scalar is checked after the
  // load, at its own line and column.
  void walk(const YAML::Node& node) {
    if (++visited_ > kMaxYamlNodes) {
      throw InputError({file_, node.Mark().line + 1, node.Mark().column + 1}, "",
                       fmt::format("aliases expand the document to more than {} nodes", kMaxYamlNodes),
                       "a document whose anchors and aliases (&name, *name) repeat less");
    }
    if (node.IsScalar()) {
      if (invalid_utf8_at(node.Scalar()) != std::string_view::npos) {
        throw InputError({file_, node.Mark().line + 1, node.Mark().column + 1}, "",
                         "a quoted escape here decodes to bytes that are not UTF-8",
                         "text without \\_ or \\x80-\\xff escapes (write the character itself)");
      }
    } else if (node.IsSequence()) {
      for (const auto& item : node) walk(item);
    } else if (node.IsMap()) {
      for (const auto& kv : node) {
        walk(kv.first);
        walk(kv.second);
      }
    }
  }

private:
  const std::string& file_;
  std::size_t visited_ = 0;
};

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  auto where = [&](std::size_t at) { return location_of(text, file, at); };
  require_utf8(text, file);
  // YAML allows no control characters but tab, line feed and carriage return (a NUL byte also
  // derails yaml-cpp's reader into text that is not UTF-8).
  const auto control = std::find_if(text.begin(), text.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
  });
  if (control != text.end()) {
    throw InputError(where(static_cast<std::size_t>(control - text.begin())), "",
                     fmt::format("control character 0x{:02x} in the text", static_cast<unsigned char>(*control)),
                     "printable text, tabs and line breaks");
  }
  try {
    YAML::Node root = YAML::Load(text);
    TreeCheck(file).walk(root);
    return root;
  } catch (const YAML::Exception& e) {
    // yaml-cpp quotes one byte of the offending character ("unknown escape character: \xe5" of
    // a multi-byte one): escape what is not UTF-8, so the message stays printable as JSON.
    std::string msg = e.msg;
    for (std::size_t at = invalid_utf8_at(msg); at != std::string_view::npos; at = invalid_utf8_at(msg)) {
      msg.replace(at, 1, fmt::format("\\x{:02x}", static_cast<unsigned char>(msg[at])));
    }
    throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "", "YAML syntax error: " + msg);
  }
}

std::string read_text_file(const std::string& path, const std::string& field) {
  if (path.empty()) throw InputError({}, field, "empty file name", "a path to a readable file");
  if (invalid_utf8_at(path) != std::string_view::npos) {
    // The name is printed in messages and JSON output, which must be UTF-8.
    throw InputError({}, field, "the file name is not valid UTF-8", "a path in UTF-8");
  }
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) throw InputError({path, 0, 0}, field, "not a readable file: " + ec.message(), "a path to a readable file");
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError({path, 0, 0}, field,
                     std::filesystem::is_directory(status) ? "not a readable file: a directory" : "not a readable file",
                     "a path to a readable file");
  }
  std::ifstream in(path);
  if (!in) throw InputError({path, 0, 0}, field, "cannot open file", "a path to a readable file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

Fields::Fields(const YAML::Node& map, std::string file, std::string path, std::initializer_list<const char*> allowed)
    : map_(map), file_(std::move(file)), path_(std::move(path)) {
  if (!map_.IsMap()) {
    throw InputError(location_of(map_, file_), path_, "expected a mapping of key: value");
  }
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& kv : map_) {
    if (!kv.first.IsScalar()) {
      // `[a, b]: 1` or `{a: 1}: 2` or `? : 1`: YAML allows such keys, no gpufabric input does.
      throw InputError(location_of(kv.first, file_), path_,
                       kv.first.IsNull() ? "a key is empty" : "a key must be a plain name, not a list or mapping",
                       join(names));
    }
    const std::string key = kv.first.as<std::string>();
    bool known = false;
    // "X_source" and "X_note" cite or explain field X beside it.
    for (const auto& n : names) known = known || n == key || key == n + "_source" || key == n + "_note";
    if (!known) {
      const std::string hint = suggest(key, names);
      throw InputError(location_of(kv.first, file_), path_.empty() ? key : path_ + "." + key,
                       "unknown key" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"), join(names));
    }
  }
}

bool Fields::has(const char* key) const { return static_cast<bool>(map_[key]); }

std::string Fields::field(const char* key) const { return path_.empty() ? std::string(key) : path_ + "." + key; }

SourceLocation Fields::where(const char* key) const {
  const YAML::Node n = map_[key];
  return n ? location_of(n, file_) : location_of(map_, file_);
}

void Fields::fail(const char* key, const std::string& problem, const std::string& valid) const {
  throw InputError(where(key), field(key), problem, valid);
}

YAML::Node Fields::node(const char* key) const {
  const YAML::Node n = map_[key];
  if (!n) fail(key, "missing required field");
  return n;
}

YAML::Node Fields::node_or_null(const char* key) const { return map_[key]; }

std::string Fields::text(const char* key) const {
  const YAML::Node n = node(key);
  if (!n.IsScalar()) fail(key, "expected a single value");
  return n.as<std::string>();
}

std::string Fields::text_or(const char* key, const std::string& fallback) const {
  return has(key) ? text(key) : fallback;
}

double Fields::number(const char* key) const {
  const YAML::Node n = node(key);
  double v = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    fail(key, "expected a number, got '" + (n.IsScalar() ? n.as<std::string>() : "a structure") + "'");
  }
  return v;
}

double Fields::positive(const char* key) const {
  const double v = number(key);
  if (!(v > 0)) fail(key, "must be greater than zero, got " + n_to_string(v), "a positive number");
  return v;
}

double Fields::positive_or(const char* key, double fallback) const { return has(key) ? positive(key) : fallback; }

double Fields::physical(const char* key, double scale, PhysicalRange range) const {
  const double si = positive(key) * scale;
  check_physical(key, si, scale, range);
  return si;
}

void Fields::check_physical(const char* key, double converted, double scale, PhysicalRange range) const {
  if (converted >= range.min && converted <= range.max) return;
  const YAML::Node n = map_[key];
  const std::string given = n && n.IsScalar() ? n.as<std::string>() : n_to_string(converted / scale);
  fail(key, fmt::format("{} ({:g} {}) is outside the physically sensible range", given, converted, range.unit),
       fmt::format("{:g} to {:g} here ({:g} to {:g} {})", range.min / scale, range.max / scale, range.min, range.max,
                   range.unit));
}

double Fields::fraction(const char* key) const {
  const double v = number(key);
  if (!(v > 0 && v <= 1)) fail(key, "must be a fraction, got " + n_to_string(v), "0 < x <= 1");
  return v;
}

long Fields::integer(const char* key, long min, long max) const {
  const double v = number(key);
  if (v != std::floor(v) || v < static_cast<double>(min) || v > static_cast<double>(max)) {
    fail(key, "got " + n_to_string(v), "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return static_cast<long>(v);
}

long Fields::integer_or(const char* key, long min, long max, long fallback) const {
  return has(key) ? integer(key, min, max) : fallback;
}

bool Fields::flag(const char* key) const {
  const YAML::Node n = node(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(key, "expected true or false", "true, false");
  return v;
}

bool Fields::flag_or(const char* key, bool fallback) const { return has(key) ? flag(key) : fallback; }

std::string Fields::choice(const char* key, const std::vector<std::string>& options) const {
  const std::string v = text(key);
  for (const auto& o : options) {
    if (o == v) return v;
  }
  const std::string hint = suggest(v, options);
  fail(key, "unknown value '" + v + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"), join(options));
}

std::vector<std::string> Fields::text_list(const char* key) const {
  std::vector<std::string> out;
  for (const auto& item : as_list(node(key), file_, field(key))) {
    if (!item.IsScalar()) throw InputError(location_of(item, file_), field(key), "expected a list of names");
    out.push_back(item.as<std::string>());
  }
  return out;
}

Fields Fields::nested(const char* key) const { return {Unchecked{}, node(key), file_, field(key)}; }

std::vector<YAML::Node> as_list(const YAML::Node& node, const std::string& file, const std::string& field) {
  if (!node.IsSequence()) throw InputError(location_of(node, file), field, "expected a list");
  std::vector<YAML::Node> out;
  for (const auto& item : node) out.push_back(item);
  return out;
}

}  // namespace gf
