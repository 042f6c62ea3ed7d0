#include "probe/temp_file.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <system_error>

namespace gf::probe {

namespace {

// Only async-signal-safe calls in the handler: unlink, signal, raise. The path is copied into a
// fixed buffer because a std::string may not be read from a handler.
char g_path[4096];
volatile std::sig_atomic_t g_armed = 0;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

extern "C" void remove_and_reraise(int sig) {
  if (g_armed) unlink(g_path);
  g_armed = 0;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

TempFile::TempFile(const std::string& dir) {
  std::string templ = dir + (dir.empty() || dir.back() == '/' ? "" : "/") + "gpufabric-probe-XXXXXX";
  if (templ.size() >= sizeof(g_path)) throw std::system_error(ENAMETOOLONG, std::generic_category(), templ);
  fd_ = mkstemp(templ.data());
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "cannot create a file in " + dir);
  path_ = templ;
  std::memcpy(g_path, path_.c_str(), path_.size() + 1);
  g_armed = 1;
  struct sigaction sa {};
  sa.sa_handler = remove_and_reraise;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

TempFile::~TempFile() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  g_armed = 0;
  if (fd_ >= 0) close(fd_);
  unlink(path_.c_str());
}

}  // namespace gf::probe
