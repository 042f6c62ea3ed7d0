#include "probe/storage.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/error.hpp"
#include "probe/temp_file.hpp"

namespace gf::probe {

namespace {

using Clock = std::chrono::steady_clock;

// O_DIRECT needs the buffer, offset and length aligned to the logical block size; 4 KiB covers
// every device in use (512 B and 4 KiB sectors).
constexpr std::size_t kDirectAlign = 4096;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::string default_directory() {
  if (access(".", W_OK) == 0) return ".";
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

[[noreturn]] void fail(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

std::string filesystem_type(const std::string& path) {
  struct statfs s {};
  if (statfs(path.c_str(), &s) != 0) return "unknown";
  switch (static_cast<std::uint32_t>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x01021994: return "tmpfs";
    case 0x858458F6: return "ramfs";
    case 0x9123683E: return "btrfs";
    case 0x2FC12FC1: return "zfs";
    case 0x6969: return "nfs";
    case 0x794C7630: return "overlayfs";
    case 0x65735546: return "fuse";
    case 0x0BD00BD0: return "lustre";
    case 0x47504653: return "gpfs";
    default: return fmt::format("0x{:x}", static_cast<std::uint32_t>(s.f_type));
  }
}

StorageResult measure_storage(const StorageOptions& options) {
  const std::string dir = options.directory.empty() ? default_directory() : options.directory;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw InputError({}, "--dir", "'" + dir + "' is not a directory", "an existing writable directory");
  }
  if (access(dir.c_str(), W_OK) != 0) {
    throw InputError({}, "--dir", "'" + dir + "' is not writable", "a writable directory");
  }
  const auto block = static_cast<std::size_t>(options.block.value());
  const auto blocks = static_cast<std::size_t>(options.file_size.value()) / block;
  if (block == 0 || block % kDirectAlign != 0 || blocks == 0) {
    throw InputError({}, "block", fmt::format("{} bytes", block), "a multiple of 4096 no larger than the file");
  }
  struct statvfs vs {};
  if (statvfs(dir.c_str(), &vs) == 0) {
    const double free_bytes = static_cast<double>(vs.f_bavail) * static_cast<double>(vs.f_frsize);
    if (free_bytes < 2 * options.file_size.value()) {
      throw InputError({}, "--dir",
                       fmt::format("'{}' has {:.0f} MiB free; the probe writes {:.0f} MiB", dir, free_bytes / 1048576,
                                   options.file_size.value() / 1048576),
                       "a directory with twice the file size free");
    }
  }

  void* raw = nullptr;
  if (posix_memalign(&raw, kDirectAlign, block) != 0) fail("posix_memalign");
  std::unique_ptr<void, FreeDeleter> buffer(raw);
  // Incompressible bytes (xorshift), so a compressing file system (ZFS, btrfs) cannot shrink the work.
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  auto* words = static_cast<std::uint64_t*>(raw);
  for (std::size_t i = 0; i < block / 8; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    words[i] = x;
  }

  StorageResult r;
  r.directory = dir;
  r.filesystem = filesystem_type(dir);
  r.file_size = Bytes(static_cast<double>(blocks * block));
  r.block = Bytes(static_cast<double>(block));

  TempFile file(dir);
  const auto w0 = Clock::now();
  for (std::size_t i = 0; i < blocks; ++i) {
    words[0] = i;  // every block differs, so no deduplication either
    if (pwrite(file.fd(), raw, block, static_cast<off_t>(i * block)) != static_cast<ssize_t>(block)) {
      fail("writing " + file.path());
    }
  }
  if (fsync(file.fd()) != 0) fail("fsync " + file.path());
  r.write = r.file_size / Seconds(std::chrono::duration<double>(Clock::now() - w0).count());
  // The pages are clean after fsync, so DONTNEED drops them: a buffered fallback read then has a
  // chance to reach the device, although nothing guarantees it (hence the note).
  posix_fadvise(file.fd(), 0, 0, POSIX_FADV_DONTNEED);

  Fd in;
  in.fd = open(file.path().c_str(), O_RDONLY | O_DIRECT);
  r.direct_io = in.fd >= 0;
  if (!r.direct_io) {
    if (errno != EINVAL) fail("opening " + file.path());
    in.fd = open(file.path().c_str(), O_RDONLY);
    if (in.fd < 0) fail("opening " + file.path());
  }
  auto read_all = [&]() -> bool {
    for (std::size_t i = 0; i < blocks; ++i) {
      const ssize_t got = pread(in.fd, raw, block, static_cast<off_t>(i * block));
      if (got == static_cast<ssize_t>(block)) continue;
      if (got < 0 && errno == EINVAL && i == 0 && r.direct_io) return false;  // open took O_DIRECT, read refused it
      fail("reading " + file.path());
    }
    return true;
  };
  auto r0 = Clock::now();
  if (!read_all()) {
    r.direct_io = false;
    close(in.fd);
    in.fd = open(file.path().c_str(), O_RDONLY);
    if (in.fd < 0) fail("opening " + file.path());
    r0 = Clock::now();
    read_all();
  }
  r.read = r.file_size / Seconds(std::chrono::duration<double>(Clock::now() - r0).count());
  r.note = r.direct_io ? fmt::format("O_DIRECT, {:.0f} KiB blocks, queue depth 1", options.block.value() / 1024)
                       : "O_DIRECT unsupported, page-cache read";
  // tmpfs accepts O_DIRECT since Linux 6.6, but its pages are memory: the figure is RAM, not a disk.
  if (r.filesystem == "tmpfs" || r.filesystem == "ramfs") r.note += "; memory-backed file system, not a disk";
  return r;
}

}  // namespace gf::probe
