#pragma once
// Runs the probe: discovery, then the selected measurements, into one Profile.
#include <set>
#include <string>

#include "probe/profile.hpp"

namespace gf::probe {

struct RunOptions {
  bool quick = false;           // about 30 s in all on a 2-core machine
  std::string directory;        // storage probe directory; empty: current directory, else $TMPDIR
  int threads = 0;              // memory and decode threads; 0 = one per core
  std::set<std::string> parts;  // memory, storage, decode, gpu; empty = all
  std::string root = "/";       // file-system root for sysfs and procfs readers
};

// The part names --parts accepts.
const std::set<std::string>& part_names();

Profile run_probe(const RunOptions& options);

// Discovery plus the MPI measurements; the profile on rank 0, nullopt on the other ranks.
std::optional<Profile> run_mpi_probe(const RunOptions& options);

}  // namespace gf::probe
