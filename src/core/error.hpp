#pragma once
// Errors in user input carry where they came from, so the CLI can print one message that names
// the file, line and field and says what would be valid, and exit with code 2.
#include <stdexcept>
#include <string>

namespace gf {

struct SourceLocation {
  std::string file;  // empty when the input came from the command line
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
public:
  InputError(SourceLocation where, std::string field, std::string problem, std::string valid = {});

  [[nodiscard]] const SourceLocation& where() const { return where_; }
  [[nodiscard]] const std::string& field() const { return field_; }
  [[nodiscard]] const std::string& problem() const { return problem_; }
  [[nodiscard]] const std::string& valid() const { return valid_; }

private:
  SourceLocation where_;
  std::string field_;
  std::string problem_;
  std::string valid_;
};

// Exit code for bad input, as documented in the README.
inline constexpr int kExitBadInput = 2;

// The closest candidate to `word` by edit distance, or empty if none is close; used for
// "did you mean" hints on unknown keys and names.
std::size_t edit_distance(const std::string& a, const std::string& b);

template <typename Range>
std::string suggest(const std::string& word, const Range& candidates) {
  std::string best;
  std::size_t best_d = word.size() / 2 + 2;
  for (const auto& c : candidates) {
    const std::string s(c);
    const std::size_t d = edit_distance(word, s);
    if (d < best_d) {
      best_d = d;
      best = s;
    }
  }
  return best;
}

template <typename Range>
std::string join(const Range& items, const std::string& sep = ", ") {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += sep;
    out += std::string(i);
  }
  return out;
}

}  // namespace gf
