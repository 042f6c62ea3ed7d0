#include "cli/output_files.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

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

void write_whole(const std::string& path, const std::string& text, const std::string& flag) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError({}, flag, "cannot write '" + path + "'", "a writable file path");
    f << text;
    f.flush();
    if (!f) throw InputError({}, flag, "writing '" + path + "' failed", "a writable file path with space left");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError({}, flag, "cannot write '" + path + "': " + ec.message(), "a writable file path");
}

void check_writable(const std::string& path, const std::string& flag) {
  const std::string probe = path + ".tmp";
  std::ofstream f(probe, std::ios::binary | std::ios::trunc);
  if (!f) throw InputError({}, flag, "cannot write '" + path + "'", "a writable file path");
  f.close();
  std::filesystem::remove(probe);
}

}  // namespace gf::cli
