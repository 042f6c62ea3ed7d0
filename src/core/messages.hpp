#pragma once
// What an output says beside its numbers, in two lists: warnings (something capped, changed or
// ignored that the user may not expect) and notes (what the defaults did). The model's layers
// keep one list of lines and mark a warning by its "warning: " prefix (topo::Topology::notes);
// machine-readable outputs give the two lists apart.
#include <string>
#include <string_view>
#include <vector>

namespace gf {

inline constexpr std::string_view kWarningPrefix = "warning: ";

struct Messages {
  std::vector<std::string> warnings;  // without the "warning: " prefix
  std::vector<std::string> notes;

  // Files `line` under warnings (prefix removed) when it starts with "warning: ", else notes.
  void add(const std::string& line);
  // A warning, once: the same text twice (a footnote every row shares) is listed once.
  void add_warning(const std::string& text);
};

}  // namespace gf
