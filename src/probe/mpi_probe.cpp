#include "probe/mpi_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "probe/cuda_probe.hpp"

#ifdef GPUFABRIC_HAVE_MPI
#include <mpi.h>
#endif

namespace gf::probe {

int mpi_partner(int rank, int ranks) {
  const int half = ranks / 2;
  if (rank < half) return rank + half;
  if (rank < 2 * half) return rank - half;
  return -1;
}

#ifndef GPUFABRIC_HAVE_MPI

bool mpi_built() { return false; }

std::optional<MpiResults> measure_mpi(const MpiOptions&) {
  throw InputError({}, "--mpi", "this gpufabric was built without MPI",
                   "rebuild after installing Open MPI (libopenmpi-dev openmpi-bin; see scripts/install-deps.sh)");
}

#else

namespace {

constexpr int kTag = 7;

struct MpiSession {
  bool owned = false;
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      owned = true;
    }
  }
  ~MpiSession() {
    if (owned) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

// Seconds per round trip of `bytes` between `me` and `peer`; `me` < `peer` starts each trip.
double ping_pong(int me, int peer, std::vector<char>& buf, std::size_t bytes, int warmup, int iters) {
  const bool first = me < peer;
  auto trip = [&] {
    const int n = static_cast<int>(bytes);
    if (first) {
      MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
    }
  };
  for (int i = 0; i < warmup; ++i) trip();
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) trip();
  return (MPI_Wtime() - t0) / iters;
}

}  // namespace

bool mpi_built() { return true; }

std::optional<MpiResults> measure_mpi(const MpiOptions& options) {
  MpiSession session;
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  // Host names of every rank: to count nodes, label pairs, and pick a GPU per rank on its node.
  constexpr int kName = MPI_MAX_PROCESSOR_NAME;
  std::vector<char> mine(kName, '\0'), names(static_cast<std::size_t>(kName) * static_cast<std::size_t>(ranks));
  int len = 0;
  MPI_Get_processor_name(mine.data(), &len);
  MPI_Allgather(mine.data(), kName, MPI_CHAR, names.data(), kName, MPI_CHAR, MPI_COMM_WORLD);
  auto host = [&](int r) { return std::string(names.data() + static_cast<std::size_t>(r) * kName); };
  int local_rank = 0;
  for (int r = 0; r < rank; ++r) local_rank += host(r) == host(rank) ? 1 : 0;

  MpiResults res;
  res.ranks = ranks;
  std::set<std::string> hosts;
  for (int r = 0; r < ranks; ++r) hosts.insert(host(r));
  res.hosts = static_cast<int>(hosts.size());
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int vlen = 0;
  MPI_Get_library_version(version, &vlen);
  res.library = std::string(version, static_cast<std::size_t>(vlen));
  if (const auto nl = res.library.find_first_of("\n,"); nl != std::string::npos) res.library.resize(nl);

  const std::size_t big = 64u << 20;
  std::vector<char> buf(big, 1);
  if (ranks < 2) res.notes.push_back("one rank: run under mpirun -np 2 or more for point-to-point figures");
  if (ranks > 2 && ranks % 2 == 1)
    res.notes.push_back(fmt::format("rank {} has no partner (odd rank count)", ranks - 1));
  // One pair at a time, so a pair's figure is its path's and not a share of a busy NIC.
  for (int a = 0; a < ranks / 2; ++a) {
    const int b = mpi_partner(a, ranks);
    double figures[2] = {0, 0};  // seconds per 8-byte round trip, per 64 MiB round trip
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == a || rank == b) {
      const int peer = rank == a ? b : a;
      figures[0] = ping_pong(rank, peer, buf, 8, 100, options.quick ? 300 : 2000);
      figures[1] = ping_pong(rank, peer, buf, big, 1, options.quick ? 4 : 10);
    }
    MPI_Bcast(figures, 2, MPI_DOUBLE, a, MPI_COMM_WORLD);
    PairResult p;
    p.rank_a = a;
    p.rank_b = b;
    p.host_a = host(a);
    p.host_b = host(b);
    p.size = Bytes(static_cast<double>(big));
    p.latency = Seconds(figures[0] / 2);
    p.bandwidth = Bytes(2.0 * static_cast<double>(big)) / Seconds(figures[1]);
    res.pairs.push_back(p);
  }

  // MPI_Allreduce of floats, timed as the slowest rank sees it.
  const std::size_t ar_bytes = (options.quick ? 16u : 64u) << 20;
  std::vector<float> send(ar_bytes / sizeof(float), 1.0f), recv(send.size());
  const int iters = options.quick ? 3 : 10;
  MPI_Allreduce(send.data(), recv.data(), static_cast<int>(send.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(send.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double elapsed = (MPI_Wtime() - t0) / iters, slowest = 0;
  MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  CollectiveResult ar;
  ar.op = "all_reduce";
  ar.library = "mpi";
  ar.ranks = ranks;
  ar.size = Bytes(static_cast<double>(ar_bytes));
  ar.time = Seconds(slowest);
  if (rank == 0 && slowest > 0) {
    ar.algbw = ar.size / ar.time;
    ar.busbw = ar.algbw * allreduce_bus_factor(ranks);
  }
  res.allreduce = ar;

  std::string note;
  res.nccl = nccl_allreduce_across_ranks(
      rank, ranks, local_rank, ar.size, iters,
      [](void* data, std::size_t bytes) { MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD); },
      [](bool mine_ok) {
        int in = mine_ok ? 1 : 0, out = 0;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        return out != 0;
      },
      note);
  if (!note.empty()) res.notes.push_back(note);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) return std::nullopt;
  return res;
}

#endif  // GPUFABRIC_HAVE_MPI

}  // namespace gf::probe
