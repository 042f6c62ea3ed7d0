#pragma once
// Measurements between MPI ranks, run under mpirun: point-to-point bandwidth (64 MiB ping-pong)
// and latency (8-byte ping-pong) for rank pairs, one pair at a time so each pair has the path to
// itself; MPI_Allreduce bus bandwidth over all ranks; and NCCL all_reduce across the ranks when
// the binary has NCCL and every rank has a GPU.
#include <optional>

#include "probe/profile.hpp"

namespace gf::probe {

struct MpiOptions {
  bool quick = false;
};

bool mpi_built();

// Initializes and finalizes MPI itself. Returns the results on rank 0 and nullopt elsewhere.
// In a binary built without MPI this throws InputError for --mpi.
std::optional<MpiResults> measure_mpi(const MpiOptions& options);

// Rank r's partner: r + n/2 for the first half (which crosses nodes under mpirun's default
// by-slot placement), r - n/2 for the second, -1 for the odd rank out.
int mpi_partner(int rank, int ranks);

}  // namespace gf::probe
