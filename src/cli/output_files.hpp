#pragma once
// What long-running commands share: a progress bar on a terminal, and files written whole.
#include <chrono>
#include <cstddef>
#include <string>

namespace gf::cli {

// A progress bar on stderr, redrawn at most ten times a second, only when `on` (stderr is a
// terminal and --quiet was not given). Counts `unit` done of the total and their rate, or with
// an empty unit the percentage only (for work measured in fractions of runs).
class ProgressBar {
public:
  ProgressBar(bool on, std::string unit) : on_(on), unit_(std::move(unit)), start_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done, std::size_t total);
  void start_at(std::size_t done) { first_ = done; }

private:
  bool on_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_, last_;
  std::size_t first_ = 0;
};

// Whether stderr is a terminal.
bool stderr_is_terminal();

// Writes `text` to `path` whole or not at all: a temporary file beside it, renamed into place.
void write_whole(const std::string& path, const std::string& text, const std::string& flag);
// Fails now (InputError naming `flag`) when `path` could not be written later.
void check_writable(const std::string& path, const std::string& flag);

}  // namespace gf::cli
