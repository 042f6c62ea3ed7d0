#pragma once
// One GPU shared by k serving replicas, three ways: time-slicing (CUDA gives each process the
// whole GPU in turn), MPS (processes run side by side, each capped at a share of the SMs and of
// the memory) and MIG (hardware partitions). For each: how many replicas fit, what isolation
// they get, and how much slower each one serves than it would with the whole GPU, from the
// serving model (work/serving_sim.hpp) rather than a fixed factor.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "work/serving_summary.hpp"
#include "work/training_context.hpp"

namespace gf::sched {

enum class SharingMode { whole, time_slicing, mps, mig, kCount };
const char* to_string(SharingMode m);

// The isolation each mode gives, from NVIDIA's MIG User Guide, "CUDA concurrency mechanisms"
// table, and for time-slicing the k8s-device-plugin README ("nothing special is done to isolate
// workloads ... each workload has access to the GPU memory and runs in the same fault-domain").
struct Isolation {
  bool memory_protection = false;  // a replica cannot take or corrupt another's memory
  bool sm_isolation = false;       // a replica's share of the SMs is guaranteed
  bool bandwidth_qos = false;      // memory bandwidth partitioned
  bool fault_isolation = false;    // one replica's fatal error leaves the others running
};
Isolation isolation_of(SharingMode m);

struct SharingRequest {
  work::ModelSpec model;
  // The replica's format and engine settings; TP and PP must be 1 (a replica on a share of one
  // GPU). gpu_memory_utilization is the whole GPU's, split among the k replicas.
  work::ReplicaSpec replica;
  long jobs = 2;    // k replicas on one GPU
  double rate = 1;  // Poisson requests/s offered to each replica
  work::LengthDistribution input{1024};
  work::LengthDistribution output{256};
  work::SloSpec slo;
  std::string mig;      // the MIG profile; empty: the largest with k instances on the GPU
  long requests = 400;  // per simulated run
  std::uint64_t seed = 0;
  work::SimulationOptions simulation;
};

struct ModeResult {
  SharingMode mode = SharingMode::whole;
  std::string detail;  // e.g. the MIG profile, the SM cap
  bool fits = false;   // k replicas fit on the GPU
  std::string why_not;
  long replicas_fit = 0;             // the most that fit on one GPU (searched up to kMaxClients)
  long replicas = 0;                 // placed: min(k, replicas_fit)
  double stretch = 1;                // iteration time over the whole GPU's (time-slicing, MPS)
  work::ServingSummary per_replica;  // one replica's run at its rate
  double throughput_rps = 0;         // all placed replicas
  double output_tokens_per_s = 0;
  double slowdown = 0;  // mean end-to-end latency over the whole GPU's, at the same rate
  Isolation isolation;
};

struct SharingReport {
  std::string model;
  std::string gpu;
  long jobs = 0;
  double rate = 0;
  work::SloSpec slo;
  std::vector<ModeResult> modes;  // whole, time-slicing, MPS, MIG
  std::vector<std::string> assumptions;
};

// MPS clients per GPU (NVIDIA's MIG User Guide table: 48 on Volta and later).
inline constexpr long kMaxClients = 48;

// The topology's GPU 0 serves; InputError when the request is malformed (k < 1, TP > 1).
SharingReport compare_sharing(work::TrainingContext& context, const SharingRequest& request);
std::string sharing_text(const SharingReport& r);
nlohmann::json sharing_json(const SharingReport& r);

}  // namespace gf::sched
