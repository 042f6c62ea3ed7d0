#include "plan/mpi_split.hpp"

#include "core/error.hpp"

#ifdef GPUFABRIC_HAVE_MPI
#include <mpi.h>

#include <cstdlib>
#endif

namespace gf::plan {

#ifdef GPUFABRIC_HAVE_MPI
namespace {
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
}  // namespace

MpiWorld mpi_world(bool enabled) {
  MpiWorld w;
  if (!enabled) return w;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    std::atexit(finalize_at_exit);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

void mpi_broadcast(const MpiWorld& w, std::vector<char>& flags) {
  if (w.size <= 1) return;
  MPI_Bcast(flags.data(), static_cast<int>(flags.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
}

std::vector<std::string> mpi_gather(const MpiWorld& w, const std::string& text) {
  if (w.size <= 1) return {text};
  const int mine = static_cast<int>(text.size());
  std::vector<int> sizes(static_cast<std::size_t>(w.size));
  MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(sizes.size(), 0);
  std::string all;
  if (w.rank == 0) {
    int total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      offsets[i] = total;
      total += sizes[i];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), mine, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (w.rank == 0) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      out.push_back(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(sizes[i])));
    }
  }
  return out;
}

#else

MpiWorld mpi_world(bool enabled) {
  if (enabled) {
    throw InputError({}, "--mpi", "this gpufabric was built without MPI",
                     "install Open MPI (Debian: libopenmpi-dev) and rebuild, or leave out --mpi");
  }
  return {};
}
void mpi_broadcast(const MpiWorld&, std::vector<char>&) {}
std::vector<std::string> mpi_gather(const MpiWorld&, const std::string& text) { return {text}; }

#endif

}  // namespace gf::plan
