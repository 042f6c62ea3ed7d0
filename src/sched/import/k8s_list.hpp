#pragma once
// A `kubectl get pods|nodes -o json` dump: a v1 List whose items are Pods or Nodes, read with
// nlohmann-json. nlohmann keeps no positions, so the line each item starts on is found once by
// scanning the (already valid) text, and an error in an item names that line and the item's
// field path ("items[3].status.startTime").
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace gf::sched {

struct K8sList {
  std::string file;
  nlohmann::json items;    // an array
  std::vector<int> lines;  // the line items[i] starts on (0 when unknown)
};

// Throws InputError on text that is not JSON (at the line of the byte where it failed), or not a
// List (kind List, PodList or NodeList with an `items` array), or whose items are not all objects
// of `item_kind` (an item without a kind is taken as one). `command` is what makes the file.
K8sList read_k8s_list(const std::string& text, const std::string& file, const std::string& item_kind,
                      const std::string& command);

// One item's fields by path, with InputErrors at the item's line naming the full path.
class K8sItem {
public:
  K8sItem(const K8sList& list, std::size_t index);
  [[nodiscard]] const nlohmann::json& json() const { return item_; }
  // The value at a dotted path ("status.startTime"; keys with dots as separate elements), or
  // nullptr when any step is missing or null.
  [[nodiscard]] const nlohmann::json* find(std::initializer_list<std::string> path) const;
  [[nodiscard]] const nlohmann::json* find_in(const nlohmann::json& from,
                                              std::initializer_list<std::string> path) const;
  // A string at the path: nullopt when absent; an InputError when present but not a string.
  [[nodiscard]] std::optional<std::string> text(std::initializer_list<std::string> path,
                                                const std::string& valid) const;
  // An object name at the path (metadata.name, metadata.namespace) as Kubernetes allows them:
  // RFC 1123, lower-case letters, digits, '-' and '.', 1 to 253 characters; nullopt when absent.
  [[nodiscard]] std::optional<std::string> object_name(std::initializer_list<std::string> path) const;
  [[noreturn]] void fail(const std::string& field, const std::string& problem, const std::string& valid) const;
  [[nodiscard]] std::string field(std::initializer_list<std::string> path) const;  // "items[3].a.b"

private:
  const K8sList& list_;
  std::size_t index_;
  const nlohmann::json& item_;
};

}  // namespace gf::sched
