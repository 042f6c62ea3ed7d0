#include "probe/cuda_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#ifdef GPUFABRIC_HAVE_CUDA
#include <cuda_runtime.h>
#ifdef GPUFABRIC_HAVE_NCCL
#include <nccl.h>
#endif
#ifdef GPUFABRIC_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#endif

namespace gf::probe {

double allreduce_bus_factor(int ranks) { return ranks > 0 ? 2.0 * (ranks - 1) / ranks : 0.0; }

#ifndef GPUFABRIC_HAVE_CUDA

bool cuda_built() { return false; }
bool nccl_built() { return false; }

GpuResults measure_gpus(const GpuProbeOptions&) {
  GpuResults r;
  r.notes.push_back("GPU probes not built (CMake found no CUDA toolkit): measured host parts only");
  return r;
}

std::optional<CollectiveResult> nccl_allreduce_across_ranks(int, int, int, Bytes, int,
                                                            const std::function<void(void*, std::size_t)>&,
                                                            const std::function<bool(bool)>&, std::string& note) {
  note = "NCCL across ranks not built (no CUDA toolkit at build time)";
  return std::nullopt;
}

#else

namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
#define GF_CUDA(call) check((call), #call)

#ifdef GPUFABRIC_HAVE_NCCL
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}
#define GF_NCCL(call) nccl_check((call), #call)
#endif

// Owns a device buffer on the current device.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { GF_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct HostBuffer {
  void* p = nullptr;
  bool pinned;
  HostBuffer(std::size_t bytes, bool pin) : pinned(pin) {
    if (pin) {
      GF_CUDA(cudaMallocHost(&p, bytes));
    } else {
      p = std::malloc(bytes);
      if (!p) throw std::runtime_error("out of host memory for the pageable copy buffer");
    }
    std::memset(p, 1, bytes);  // touch every page: a pageable copy must not time page faults
  }
  ~HostBuffer() {
    if (pinned) {
      cudaFreeHost(p);
    } else {
      std::free(p);
    }
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Stream() {
    GF_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GF_CUDA(cudaEventCreate(&start));
    GF_CUDA(cudaEventCreate(&stop));
  }
  ~Stream() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(s);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // One warm-up, then `iters` enqueued back to back between two events.
  template <typename Enqueue>
  Seconds time(int iters, Enqueue enqueue) {
    enqueue();
    GF_CUDA(cudaStreamSynchronize(s));
    GF_CUDA(cudaEventRecord(start, s));
    for (int i = 0; i < iters; ++i) enqueue();
    GF_CUDA(cudaEventRecord(stop, s));
    GF_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    GF_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return Seconds(ms / 1e3 / iters);
  }
};

std::vector<std::size_t> copy_sizes(bool quick) {
  if (quick) return {64 * kKiB, 1 * kMiB, 16 * kMiB, 256 * kMiB};
  std::vector<std::size_t> out;
  for (std::size_t s = 64 * kKiB; s <= 256 * kMiB; s *= 4) out.push_back(s);
  return out;
}

// Enough repetitions to move about 2 GiB (1 GiB quick), at least 3 and at most 200.
int iterations(std::size_t size, bool quick) {
  const std::size_t target = (quick ? 1024 : 2048) * kMiB;
  return static_cast<int>(std::clamp<std::size_t>(target / size, 3, 200));
}

std::string pci_address(int dev) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), dev) != cudaSuccess) return {};
  std::string s(id);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.size() == 16 && s.compare(0, 4, "0000") == 0) s = s.substr(4);
  return s;
}

void host_copies(int dev, const GpuProbeOptions& o, GpuResults& r) {
  GF_CUDA(cudaSetDevice(dev));
  const auto sizes = copy_sizes(o.quick);
  const std::size_t largest = sizes.back();
  DeviceBuffer d(largest);
  Stream st;
  for (bool pinned : {true, false}) {
    HostBuffer h(largest, pinned);
    for (const char* dir : {"h2d", "d2h"}) {
      CopyCurve c;
      c.gpu = dev;
      c.pci_address = pci_address(dev);
      c.direction = dir;
      c.memory = pinned ? "pinned" : "pageable";
      const bool h2d = c.direction == "h2d";
      for (std::size_t size : sizes) {
        const Seconds t = st.time(iterations(size, o.quick), [&] {
          GF_CUDA(cudaMemcpyAsync(h2d ? d.p : h.p, h2d ? h.p : d.p, size,
                                  h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st.s));
        });
        c.points.push_back({Bytes(static_cast<double>(size)), Bytes(static_cast<double>(size)) / t});
      }
      r.copies.push_back(c);
      if (pinned && h2d && o.during_load) {
        for (int i = 0; i < 16; ++i) {
          GF_CUDA(cudaMemcpyAsync(d.p, h.p, largest, cudaMemcpyHostToDevice, st.s));
        }
        o.during_load(pci_address(dev));
        GF_CUDA(cudaStreamSynchronize(st.s));
      }
    }
  }
  // Device to device: counted as bytes copied (the memory moves twice that: one read, one write).
  DeviceBuffer d2(largest);
  CopyCurve c;
  c.gpu = dev;
  c.pci_address = pci_address(dev);
  c.direction = "d2d";
  c.memory = "device";
  const Seconds t = st.time(iterations(largest, o.quick),
                            [&] { GF_CUDA(cudaMemcpyAsync(d2.p, d.p, largest, cudaMemcpyDeviceToDevice, st.s)); });
  c.points.push_back({Bytes(static_cast<double>(largest)), Bytes(static_cast<double>(largest)) / t});
  r.copies.push_back(c);
}

#ifdef GPUFABRIC_HAVE_CUBLAS
// Dense GEMMs through cuBLAS on one GPU, square and of the sizes a transformer layer runs
// (4096 and 8192; quick: 4096), in bf16, fp16 and tf32 with fp32 accumulation: the mean of
// back-to-back runs after warm-up, counted as 2 m n k FLOPs. The operands are left as cudaMalloc
// gives them (the values do not change a GEMM's time).
void gemms(int dev, bool quick, GpuResults& r) {
  GF_CUDA(cudaSetDevice(dev));
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    r.notes.push_back(fmt::format("GPU {}: cuBLAS did not initialise: no GEMM measured", dev));
    return;
  }
  struct Kind {
    const char* name;
    cudaDataType_t type;
    cublasComputeType_t compute;
    std::size_t bytes;
  };
  const Kind kinds[] = {{"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2},
                        {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
                        {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4}};
  std::vector<long> sizes{4096};
  if (!quick) sizes.push_back(8192);
  Stream st;
  cublasSetStream(h, st.s);
  for (const auto& kind : kinds) {
    for (const long n : sizes) {
      const std::size_t bytes = static_cast<std::size_t>(n * n) * kind.bytes;
      DeviceBuffer a(bytes), b(bytes), c(bytes);
      const float alpha = 1.0F, beta = 0.0F;
      bool ok = true;
      auto run = [&] {
        ok = ok &&
             cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n),
                          &alpha, a.p, kind.type, static_cast<int>(n), b.p, kind.type, static_cast<int>(n), &beta, c.p,
                          kind.type, static_cast<int>(n), kind.compute, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
      };
      for (int i = 0; i < 3; ++i) run();
      const Seconds t = st.time(quick ? 5 : 20, run);
      if (!ok) {
        r.notes.push_back(fmt::format("GPU {}: cuBLAS refused the {} GEMM of {}: not measured", dev, kind.name, n));
        continue;
      }
      const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      r.gemms.push_back({dev, kind.name, n, n, n, flops / t.value() / 1e12});
    }
  }
  cublasDestroy(h);
}
#endif

void peer_matrix(int count, bool quick, GpuResults& r) {
  const std::size_t size = (quick ? 64 : 256) * kMiB;
  std::vector<std::unique_ptr<DeviceBuffer> > buf;
  for (int d = 0; d < count; ++d) {
    GF_CUDA(cudaSetDevice(d));
    buf.push_back(std::make_unique<DeviceBuffer>(size));
  }
  for (int src = 0; src < count; ++src) {
    for (int dst = 0; dst < count; ++dst) {
      if (src == dst) continue;
      int can = 0;
      GF_CUDA(cudaDeviceCanAccessPeer(&can, src, dst));
      GF_CUDA(cudaSetDevice(src));
      if (can) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();  // clear the sticky "already enabled"
        } else {
          GF_CUDA(e);
        }
      }
      Stream st;
      const Seconds t = st.time(iterations(size, quick), [&] {
        GF_CUDA(cudaMemcpyPeerAsync(buf[static_cast<std::size_t>(dst)]->p, dst, buf[static_cast<std::size_t>(src)]->p,
                                    src, size, st.s));
      });
      r.peers.push_back({src, dst, can != 0, Bytes(static_cast<double>(size)) / t});
    }
  }
}

#ifdef GPUFABRIC_HAVE_NCCL
CollectiveResult nccl_single_process(int count, bool quick) {
  const std::size_t size = (quick ? 64 : 256) * kMiB;
  const std::size_t elems = size / sizeof(float);
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(count));
  GF_NCCL(ncclCommInitAll(comms.data(), count, nullptr));
  std::vector<std::unique_ptr<DeviceBuffer> > send, recv;
  std::vector<std::unique_ptr<Stream> > streams;
  for (int d = 0; d < count; ++d) {
    GF_CUDA(cudaSetDevice(d));
    send.push_back(std::make_unique<DeviceBuffer>(size));
    recv.push_back(std::make_unique<DeviceBuffer>(size));
    streams.push_back(std::make_unique<Stream>());
  }
  auto launch = [&] {
    GF_NCCL(ncclGroupStart());
    for (std::size_t d = 0; d < comms.size(); ++d) {
      GF_NCCL(ncclAllReduce(send[d]->p, recv[d]->p, elems, ncclFloat, ncclSum, comms[d], streams[d]->s));
    }
    GF_NCCL(ncclGroupEnd());
  };
  auto sync = [&] {
    for (int d = 0; d < count; ++d) {
      GF_CUDA(cudaSetDevice(d));
      GF_CUDA(cudaStreamSynchronize(streams[static_cast<std::size_t>(d)]->s));
    }
  };
  const int warmup = 5;
  const int iters = quick ? 10 : 20;
  for (int i = 0; i < warmup; ++i) launch();
  sync();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) launch();
  sync();
  const Seconds t(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters);
  for (auto c : comms) ncclCommDestroy(c);
  CollectiveResult res;
  res.op = "all_reduce";
  res.library = "nccl";
  res.ranks = count;
  res.size = Bytes(static_cast<double>(size));
  res.time = t;
  res.algbw = res.size / t;
  res.busbw = res.algbw * allreduce_bus_factor(count);
  return res;
}
#endif

}  // namespace

bool cuda_built() { return true; }
bool nccl_built() {
#ifdef GPUFABRIC_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

GpuResults measure_gpus(const GpuProbeOptions& options) {
  GpuResults r;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    r.notes.push_back(fmt::format("no GPU found: measured host parts only ({})",
                                  e != cudaSuccess ? cudaGetErrorString(e) : "CUDA sees no device"));
    return r;
  }
  for (int d = 0; d < count; ++d) host_copies(d, options, r);
#ifdef GPUFABRIC_HAVE_CUBLAS
  gemms(0, options.quick, r);  // GPUs of one server are alike: the first stands for them
#else
  r.notes.push_back("cuBLAS not built: no GEMM measured (train --compute-profile needs one)");
#endif
  if (count > 1) {
    peer_matrix(count, options.quick, r);
  } else {
    r.notes.push_back("one GPU: no peer copies to measure");
  }
#ifdef GPUFABRIC_HAVE_NCCL
  r.nccl = nccl_single_process(count, options.quick);
  if (count == 1) r.notes.push_back("NCCL all_reduce on one GPU: busbw is 0 by nccl-tests' formula");
#else
  r.notes.push_back("NCCL not built (CMake found no nccl.h / libnccl)");
#endif
  return r;
}

std::optional<CollectiveResult> nccl_allreduce_across_ranks(int rank, int ranks, int local_rank, Bytes size,
                                                            int iterations_count,
                                                            const std::function<void(void*, std::size_t)>& broadcast,
                                                            const std::function<bool(bool)>& all_true,
                                                            std::string& note) {
#ifndef GPUFABRIC_HAVE_NCCL
  (void)rank, (void)ranks, (void)local_rank, (void)size, (void)iterations_count, (void)broadcast, (void)all_true;
  note = "NCCL across ranks not built (CMake found no NCCL)";
  return std::nullopt;
#else
  int count = 0;
  const bool have = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  // Every rank must agree on going on, or the ones with a GPU would wait in NCCL forever.
  if (!all_true(have)) {
    note = "NCCL across ranks: no GPU found on at least one rank";
    return std::nullopt;
  }
  GF_CUDA(cudaSetDevice(local_rank % count));
  ncclUniqueId id{};
  if (rank == 0) GF_NCCL(ncclGetUniqueId(&id));
  broadcast(&id, sizeof(id));
  ncclComm_t comm = nullptr;
  GF_NCCL(ncclCommInitRank(&comm, ranks, id, rank));
  const auto bytes = static_cast<std::size_t>(size.value());
  DeviceBuffer send(bytes), recv(bytes);
  Stream st;
  auto launch = [&] { GF_NCCL(ncclAllReduce(send.p, recv.p, bytes / sizeof(float), ncclFloat, ncclSum, comm, st.s)); };
  for (int i = 0; i < 5; ++i) launch();
  GF_CUDA(cudaStreamSynchronize(st.s));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations_count; ++i) launch();
  GF_CUDA(cudaStreamSynchronize(st.s));
  const Seconds t(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations_count);
  ncclCommDestroy(comm);
  CollectiveResult res;
  res.op = "all_reduce";
  res.library = "nccl";
  res.ranks = ranks;
  res.size = Bytes(static_cast<double>(bytes));
  res.time = t;
  res.algbw = res.size / t;
  res.busbw = res.algbw * allreduce_bus_factor(ranks);
  return res;
#endif
}

#endif  // GPUFABRIC_HAVE_CUDA

}  // namespace gf::probe
