#pragma once
// GPU measurements through the CUDA runtime and NCCL: H2D and D2H copies from pinned and pageable
// memory across sizes, device-to-device copies, the GPU-to-GPU peer copy matrix, and NCCL
// all_reduce bus bandwidth (nccl-tests' busbw = algbw x 2(n-1)/n). Compiled only where CMake found
// the CUDA toolkit (GPUFABRIC_HAVE_CUDA); elsewhere the results carry a note saying so.
#include <functional>
#include <optional>
#include <string>

#include "probe/profile.hpp"

namespace gf::probe {

struct GpuProbeOptions {
  bool quick = false;
  // Called with a GPU's PCI address while large H2D copies to it are in flight, so the caller can
  // read the PCIe link state under load (idle GPUs train their links down to save power).
  std::function<void(const std::string& pci_address)> during_load;
};

// True when this binary was built with the CUDA runtime (and NCCL, for the second).
bool cuda_built();
bool nccl_built();

// Measures every visible GPU. With no GPU or no driver, returns a note "no GPU found: ...".
GpuResults measure_gpus(const GpuProbeOptions& options);

// NCCL all_reduce across processes (one GPU each, picked by `local_rank`); the unique id goes from
// rank 0 to the others through `broadcast` (an MPI_Bcast in mpi_probe.cpp), and `all_true` is a
// logical AND over the ranks (MPI_Allreduce with MPI_LAND). Returns nullopt with
// `note` set when NCCL or a GPU is missing. Every rank must call it.
std::optional<CollectiveResult> nccl_allreduce_across_ranks(int rank, int ranks, int local_rank, Bytes size,
                                                            int iterations,
                                                            const std::function<void(void*, std::size_t)>& broadcast,
                                                            const std::function<bool(bool)>& all_true,
                                                            std::string& note);

// nccl-tests' bus bandwidth factor for all_reduce: 2(n-1)/n (0 for one rank).
double allreduce_bus_factor(int ranks);

}  // namespace gf::probe
