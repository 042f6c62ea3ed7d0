#include "core/messages.hpp"

#include <algorithm>

namespace gf {

void Messages::add(const std::string& line) {
  if (line.starts_with(kWarningPrefix)) {
    add_warning(line.substr(kWarningPrefix.size()));
  } else {
    notes.push_back(line);
  }
}

void Messages::add_warning(const std::string& text) {
  if (std::find(warnings.begin(), warnings.end(), text) == warnings.end()) warnings.push_back(text);
}

}  // namespace gf
