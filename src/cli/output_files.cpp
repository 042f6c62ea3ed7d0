#include "cli/output_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "cli/cluster_options.hpp"
#include "core/error.hpp"

namespace gf::cli {

void ProgressBar::update(std::size_t done, std::size_t total) {
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done - first_) / elapsed : 0;
  const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0;
  constexpr int kWidth = 30;
  const int filled = total ? static_cast<int>(kWidth * static_cast<double>(done) / static_cast<double>(total)) : kWidth;
  if (unit_.empty()) {
    std::fprintf(stderr, "\r[%s%s] %3.0f%%  %d:%02d left ", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(),
                 total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                 static_cast<int>(left) / 60, static_cast<int>(left) % 60);
  } else {
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s  %.1f/s  %d:%02d left ",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(), done, total, unit_.c_str(), rate,
                 static_cast<int>(left) / 60, static_cast<int>(left) % 60);
  }
  if (done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

namespace {

[[noreturn]] void cannot_write(const std::string& path, const std::string& flag, int err) {
  throw InputError({}, flag, "cannot write '" + path + "': " + std::strerror(err), "a writable file path");
}

// What stands at `path` now, following symlinks; a directory is refused, since no file can replace
// it. Returns whether it is a special file (a FIFO, /dev/stdout, /dev/null), which is written in
// place: it is not a file that a failed run could leave half-written, and renaming a file over it
// would replace the device node or the link to it.
bool special_output(const std::string& path, const std::string& flag) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;  // nothing there yet, or a dangling symlink
  if (S_ISDIR(st.st_mode)) throw InputError({}, flag, "'" + path + "' is a directory", "a file path");
  return !S_ISREG(st.st_mode);
}

// A new file of a unique name beside `path`, open for writing. It is made the way mkstemp makes
// one (a random suffix, O_CREAT | O_EXCL, so nothing already there, file or planted symlink, is
// ever opened), but with the mode an output file gets: 0666 less the umask, or the mode of the
// file it will replace. Returns -1 with errno set on failure.
int open_temporary(const std::string& path, std::string& name) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  static thread_local std::mt19937_64 random{std::random_device{}()};
  struct stat old {};
  const bool replacing = stat(path.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  for (int tries = 0; tries < 100; ++tries) {
    name = (dir / fmt::format(".{}.{:016x}.tmp", p.filename().string(), random())).string();
    const int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd >= 0) {
      if (replacing) (void)fchmod(fd, old.st_mode & 07777);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

// Writes all of `text` to `fd`; false with errno set when the disk is full or the write fails.
bool write_all(int fd, const std::string& text) {
  const char* at = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = write(fd, at, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

void write_special(const std::string& path, const std::string& text, const std::string& flag) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) cannot_write(path, flag, errno);
  const bool ok = write_all(fd, text);
  const int err = errno;
  close(fd);
  if (!ok) cannot_write(path, flag, err);
}

// The file's identity for comparison: its weakly canonical path and, when it exists, its device
// and inode.
struct Identity {
  std::string canonical;
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
};

Identity identity_of(const std::string& path) {
  Identity id;
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(path, ec);
  if (ec) canonical = std::filesystem::absolute(path, ec).lexically_normal();
  id.canonical = canonical.string();
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  return id;
}

bool same_file(const Identity& a, const Identity& b) {
  if (a.exists && b.exists) return a.device == b.device && a.inode == b.inode;
  return a.canonical == b.canonical;
}

}  // namespace

void write_whole(const std::string& path, const std::string& text, const std::string& flag) {
  if (special_output(path, flag)) return write_special(path, text, flag);
  std::string tmp;
  const int fd = open_temporary(path, tmp);
  if (fd < 0) cannot_write(path, flag, errno);
  const bool written = write_all(fd, text);
  int err = errno;
  const bool closed = close(fd) == 0;
  if (written && !closed) err = errno;
  if (!written || !closed) {
    unlink(tmp.c_str());
    cannot_write(path, flag, err);
  }
  // rename() replaces a symlink at `path` itself, never the file it points to.
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    unlink(tmp.c_str());
    cannot_write(path, flag, err);
  }
}

void check_writable(const std::string& path, const std::string& flag) {
  if (special_output(path, flag)) {
    if (access(path.c_str(), W_OK) != 0) cannot_write(path, flag, errno);
    return;
  }
  std::string tmp;
  const int fd = open_temporary(path, tmp);
  if (fd < 0) cannot_write(path, flag, errno);
  close(fd);
  unlink(tmp.c_str());
}

void refuse_same_file(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  std::vector<std::pair<const NamedPath*, Identity>> outs;
  for (const auto& o : outputs)
    if (!o.path.empty()) outs.emplace_back(&o, identity_of(o.path));
  for (std::size_t i = 0; i < outs.size(); ++i) {
    const auto& [out, id] = outs[i];
    for (const auto& in : inputs) {
      if (in.path.empty()) continue;
      const Identity input = identity_of(in.path);
      if (input.exists && same_file(id, input)) {
        throw InputError({}, out->flag,
                         fmt::format("'{}' is the file {} reads ('{}'); writing it would replace that input", out->path,
                                     in.flag, in.path),
                         "a different file for " + out->flag + " than for " + in.flag);
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (same_file(id, outs[j].second)) {
        throw InputError({}, out->flag,
                         fmt::format("'{}' is also the file of {} ('{}'); one output would overwrite the other",
                                     out->path, outs[j].first->flag, outs[j].first->path),
                         "a different file for each of " + outs[j].first->flag + " and " + out->flag);
      }
    }
  }
}

std::vector<NamedPath> cluster_inputs(const ClusterOptions& cluster) {
  return {{"CLUSTER", cluster.positional}, {"--cluster", cluster.cluster_file}, {"--calibration", cluster.calibration}};
}

}  // namespace gf::cli
