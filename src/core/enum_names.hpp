#pragma once
// One name table per enum, beside the enum: every conversion to and from text (printing, the
// command line, YAML fields, error messages' lists of valid values) reads the same table, so no
// two converters can disagree on a spelling or a fallback.
//
//   inline constexpr std::array<EnumName<FabricKind>, 4> kFabricKindNames{{
//       {FabricKind::single, "single"}, {FabricKind::fat_tree, "fat-tree"}, {FabricKind::rail, "rail"},
//       {FabricKind::fat_tree, "fat_tree", true}}};  // an alias: accepted, never printed or listed
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace gf {

template <typename E>
struct EnumName {
  E value;
  const char* name;    // a literal: to_string returns it as it is
  bool alias = false;  // another spelling of a value listed before it
};

template <typename E, std::size_t N>
using EnumNames = std::array<EnumName<E>, N>;

// The canonical name of `value`: its first entry that is not an alias; "?" for a value the table
// lacks (only a value cast from an out-of-range integer).
template <typename E, std::size_t N>
constexpr const char* name_of(const EnumNames<E, N>& table, E value) {
  for (const auto& e : table)
    if (e.value == value && !e.alias) return e.name;
  return "?";
}

// The value named `text` (canonical name or alias, matched exactly), or nullopt.
template <typename E, std::size_t N>
constexpr std::optional<E> parse_name(const EnumNames<E, N>& table, std::string_view text) {
  for (const auto& e : table)
    if (text == e.name) return e.value;
  return std::nullopt;
}

// As parse_name, ignoring ASCII case: NCCL reads its environment's names so (NCCL_PROTO=ll128).
template <typename E, std::size_t N>
constexpr std::optional<E> parse_name_nocase(const EnumNames<E, N>& table, std::string_view text) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (const auto& e : table) {
    const std::string_view name = e.name;
    if (name.size() != text.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < name.size() && same; ++i) same = lower(name[i]) == lower(text[i]);
    if (same) return e.value;
  }
  return std::nullopt;
}

// The canonical names, in the table's order (aliases left out).
template <typename E, std::size_t N>
std::vector<std::string> names(const EnumNames<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& e : table)
    if (!e.alias) out.emplace_back(e.name);
  return out;
}

// Every accepted spelling, aliases too, in the table's order (for validators that list them all).
template <typename E, std::size_t N>
std::vector<std::string> spellings(const EnumNames<E, N>& table) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

// The value named `text`, or an InputError at `where`/`field` saying what it got and listing the
// canonical names ("got 'x'", valid: "single, fat-tree, rail"), as the command line reports it.
template <typename E, std::size_t N>
E parse_name_or_throw(const EnumNames<E, N>& table, std::string_view text, const std::string& field,
                      const SourceLocation& where = {}) {
  if (const auto v = parse_name(table, text)) return *v;
  throw InputError(where, field, "got '" + std::string(text) + "'", join(names(table)));
}

}  // namespace gf
