#pragma once
// The little of MPI the planner needs: which rank this is, a broadcast of what is already done,
// and a gather of every rank's results to rank 0. Without MPI in the build (or without --mpi)
// the world is one rank and these do nothing.
#include <string>
#include <vector>

namespace gf::plan {

struct MpiWorld {
  int rank = 0;
  int size = 1;
};

// Initialises MPI on first use when `enabled` (InputError when gpufabric was built without MPI).
MpiWorld mpi_world(bool enabled);
void mpi_broadcast(const MpiWorld& w, std::vector<char>& flags);
// Rank 0 receives every rank's text (its own included), in rank order; others receive nothing.
std::vector<std::string> mpi_gather(const MpiWorld& w, const std::string& text);

}  // namespace gf::plan
