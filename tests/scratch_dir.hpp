#pragma once
// A test's own temporary directory: made fresh by mkdtemp (unique, mode 0700, so no other user or
// test can have planted a file or symlink in it), removed with everything in it when the test
// ends. Every test that writes a file writes it here, never under a fixed name in /tmp.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gf::test {

class ScratchDir {
public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gpufabric-test-XXXXXX").string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
      return;
    }
    path_ = buf.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // The path of `name` inside the directory (not created).
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to `name` inside the directory and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    return p;
  }

private:
  std::filesystem::path path_;
};

}  // namespace gf::test
