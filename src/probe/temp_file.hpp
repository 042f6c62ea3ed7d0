#pragma once
// A temporary file that is removed when the object goes out of scope, and also when SIGINT,
// SIGTERM or SIGHUP arrives while it exists (the handler unlinks it and re-raises the signal).
#include <string>

namespace gf::probe {

class TempFile {
public:
  // Creates DIR/gpufabric-probe-XXXXXX; throws std::system_error on failure.
  explicit TempFile(const std::string& dir);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int fd() const { return fd_; }

private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace gf::probe
