#pragma once
// Sequential read bandwidth of the file system under a directory: write a temporary file, fsync
// it, drop it from the page cache, and read it back with O_DIRECT in aligned 1 MiB blocks (queue
// depth 1). Where O_DIRECT is refused (tmpfs, some FUSE and network file systems) the read goes
// through the page cache and the result says so instead of passing a cached figure off as disk.
#include <string>

#include "probe/profile.hpp"

namespace gf::probe {

struct StorageOptions {
  std::string directory;  // empty: the current directory, else $TMPDIR
  Bytes file_size = Bytes(256.0 * 1048576);
  Bytes block = Bytes(1048576);
};

// Throws InputError for a missing, unwritable or too-full directory. The temporary file is
// removed on every path out, including SIGINT/SIGTERM while it exists.
StorageResult measure_storage(const StorageOptions& options);

// The file-system type of a path ("ext4", "tmpfs", ...), or its magic number in hex.
std::string filesystem_type(const std::string& path);

}  // namespace gf::probe
