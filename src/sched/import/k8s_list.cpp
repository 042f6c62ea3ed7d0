#include "sched/import/k8s_list.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/yaml_fields.hpp"

namespace gf::sched {

namespace {

int line_at(const std::string& text, std::size_t at) {
  const auto upto = static_cast<std::ptrdiff_t>(std::min(at, text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + upto, '\n'));
}

// Offsets where the elements of the top-level object's "items" array begin. The text is valid
// JSON (nlohmann parsed it), so strings, brackets and commas are all a scan has to tell apart.
std::vector<std::size_t> item_offsets(const std::string& text) {
  std::vector<std::size_t> out;
  int depth = 0;
  bool in_items = false, want_value = false;
  std::string key;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (in_items && depth == 2 && want_value && !space && c != ',' && c != ']') {
      out.push_back(i);
      want_value = false;
    }
    if (c == '"') {
      const std::size_t start = i + 1;
      for (i = start; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (depth == 1) {
        std::size_t k = i + 1;
        while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
        if (k < text.size() && text[k] == ':') key = text.substr(start, i - start);
      }
    } else if (c == '{' || c == '[') {
      if (depth == 1 && c == '[' && key == "items") in_items = want_value = true;
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
      if (depth == 1) in_items = false;
    } else if (c == ',' && in_items && depth == 2) {
      want_value = true;
    }
  }
  return out;
}

}  // namespace

K8sList read_k8s_list(const std::string& text, const std::string& file, const std::string& item_kind,
                      const std::string& command) {
  require_utf8(text, file);
  K8sList out;
  out.file = file;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError({file, line_at(text, e.byte == 0 ? 0 : e.byte - 1), 0}, "", "not valid JSON",
                     "the output of `" + command + "`");
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax that nlohmann cannot hold: a number beyond a double's range.
    throw InputError({file, 0, 0}, "", std::string("not readable JSON: ") + e.what(),
                     "the output of `" + command + "`");
  }
  const auto kind = doc.is_object() && doc.contains("kind") && doc["kind"].is_string() ? doc["kind"].get<std::string>()
                                                                                       : std::string();
  if (kind != "List" && kind != item_kind + "List")
    throw InputError(
        {file, 1, 0}, "kind",
        kind.empty() ? "the document has no kind: not a Kubernetes List" : fmt::format("'{}' is not a List", kind),
        "a v1 List of " + item_kind + "s, as `" + command + "` prints it");
  if (!doc.contains("items") || !doc["items"].is_array())
    throw InputError({file, 1, 0}, "items", "missing or not an array",
                     "a List's `items`: an array of " + item_kind + "s");
  out.items = std::move(doc["items"]);
  const auto offsets = item_offsets(text);
  for (std::size_t i = 0; i < out.items.size(); ++i)
    out.lines.push_back(offsets.size() == out.items.size() ? line_at(text, offsets[i]) : 0);
  for (std::size_t i = 0; i < out.items.size(); ++i) {
    const K8sItem item(out, i);
    if (!out.items[i].is_object()) item.fail(fmt::format("items[{}]", i), "is not an object", "a " + item_kind);
    const auto k = item.text({"kind"}, "a string");
    if (k && *k != item_kind)
      item.fail(item.field({"kind"}), fmt::format("'{}' in a list of {}s", *k, item_kind), item_kind);
  }
  return out;
}

K8sItem::K8sItem(const K8sList& list, std::size_t index) : list_(list), index_(index), item_(list.items[index]) {}

const nlohmann::json* K8sItem::find_in(const nlohmann::json& from, std::initializer_list<std::string> path) const {
  const nlohmann::json* at = &from;
  for (const auto& key : path) {
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end() || it->is_null()) return nullptr;
    at = &*it;
  }
  return at;
}

const nlohmann::json* K8sItem::find(std::initializer_list<std::string> path) const { return find_in(item_, path); }

std::optional<std::string> K8sItem::text(std::initializer_list<std::string> path, const std::string& valid) const {
  const nlohmann::json* v = find(path);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) fail(field(path), "is not a string", valid);
  return v->get<std::string>();
}

std::optional<std::string> K8sItem::object_name(std::initializer_list<std::string> path) const {
  const char* valid = "lower-case letters, digits, '-' and '.', 1 to 253 characters (RFC 1123)";
  auto name = text(path, valid);
  if (!name) return name;
  const bool ok = !name->empty() && name->size() <= 253 && std::all_of(name->begin(), name->end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
  if (!ok) fail(field(path), fmt::format("'{}' is not a Kubernetes name", *name), valid);
  return name;
}

std::string K8sItem::field(std::initializer_list<std::string> path) const {
  std::string out = fmt::format("items[{}]", index_);
  for (const auto& key : path) out += "." + key;
  return out;
}

void K8sItem::fail(const std::string& field, const std::string& problem, const std::string& valid) const {
  throw InputError({list_.file, list_.lines[index_], 0}, field, problem, valid);
}

}  // namespace gf::sched
