#pragma once
// What long-running commands share: a progress bar on a terminal, and files written whole.
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

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

// Writes `text` to `path` whole or not at all: a temporary file of a unique name (mkstemp) beside
// it, renamed into place, so a failed run leaves neither a 0-byte nor a half-written file, and a
// file or symlink planted under a predictable temporary name is never followed.
void write_whole(const std::string& path, const std::string& text, const std::string& flag);
// Fails now (InputError naming `flag`) when `path` could not be written later: a directory, or a
// directory that does not exist or refuses new files. Leaves nothing behind.
void check_writable(const std::string& path, const std::string& flag);

// A file a command reads or writes, and the flag (or positional name) that named it.
struct NamedPath {
  std::string flag;
  std::string path;
};
// Refuses, with an InputError naming both flags, an output that is the same file as an input
// (`plan my.yaml --report my.yaml` would replace the plan) or as another output. Paths are
// compared as std::filesystem::weakly_canonical spells them (./a, a and dir/../a are one file;
// symlinks resolved) and, where both exist, by device and inode (hard links). Inputs that do not
// exist are names (a preset, a built-in plan), not files, and are skipped; empty paths too.
void refuse_same_file(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs);

struct ClusterOptions;
// The files the cluster options read: CLUSTER, --cluster and --calibration.
std::vector<NamedPath> cluster_inputs(const ClusterOptions& cluster);

}  // namespace gf::cli
