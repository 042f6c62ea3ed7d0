#pragma once
// An inference service scaled as Kubernetes' Horizontal Pod Autoscaler scales a Deployment, over
// a load curve, on a cluster whose idle GPUs run preemptible training jobs. The serving model
// prices one replica once (the rate it serves within the SLO, and its latency and busy time
// against load); the simulation then steps through the curve in HPA sync periods.
//
// The HPA, as kubernetes.io documents it ("Horizontal Pod Autoscaling", algorithm details and
// configurable scaling behavior): desired = ceil(current x metric / target), no change while
// metric / target is within the tolerance (0.1, --horizontal-pod-autoscaler-tolerance); every
// sync period (15 s, --horizontal-pod-autoscaler-sync-period); a scale-down takes the highest
// recommendation of the last 300 s (scaleDown.stabilizationWindowSeconds); default policies
// scale up by at most max(100%, 4 pods) and down by at most 100% per 15 s.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "sched/load_curve.hpp"
#include "work/inference_cost.hpp"
#include "work/serving_summary.hpp"

namespace gf::sched {

enum class HpaMetric { utilization, queue, latency };
inline constexpr EnumNames<HpaMetric, 3> kHpaMetricNames{
    {{HpaMetric::utilization, "utilization"}, {HpaMetric::queue, "queue"}, {HpaMetric::latency, "latency"}}};
const char* to_string(HpaMetric m);

struct HpaSpec {
  HpaMetric metric = HpaMetric::utilization;
  // utilization: engine busy %, as DCGM_FI_DEV_GPU_UTIL counts time with a kernel running;
  // queue: requests in the replica (running and waiting) per replica;
  // latency: TTFT in ms at the SLO percentile.
  double target = 60;
  double tolerance = 0.1;
  double sync_period_s = 15;
  double scale_up_stabilization_s = 0;
  double scale_down_stabilization_s = 300;
  long min_replicas = 1;
  long max_replicas = 0;  // 0: as many as the cluster holds
};

struct StartupSpec {
  double node_start_s = 0;            // 0: the nodes are up (they run training when the service leaves them)
  double pod_start_s = 30;            // container start and engine initialisation (an assumption unless cited)
  std::string storage = "nvme-gen4";  // catalog storage the weights are read from
  double storage_read_Bps = 0;        // overrides the catalog's read bandwidth when > 0
};

struct TrainingSpec {
  bool enabled = true;
  long job_gpus = 0;         // GPUs per training job; 0: one node's
  double checkpoint_s = 60;  // saving a checkpoint when preempted (the GPUs wait for it)
  double restart_s = 120;    // loading it again and rejoining when restarted (lost training time)
};

struct ServiceSpec {
  std::string file;
  std::string name;
  std::string model;  // library name
  work::ReplicaSpec replica;
  std::string preset;
  long nodes = 0;  // cluster size: nodes of the preset ...
  long gpus = 0;   // ... or GPUs of its GPU (whole nodes)
  work::LengthDistribution input{1024};
  work::LengthDistribution output{256};
  work::SloSpec slo;
  HpaSpec hpa;
  StartupSpec startup;
  TrainingSpec training;
  std::uint64_t seed = 0;
  SourceLocation where;
};

// Reads a service file (docs/autoscale-format.md); a bad field is an InputError at file:line.
ServiceSpec parse_service(const std::string& text, const std::string& file);
ServiceSpec load_service(const std::string& path);

// What the serving model says about one replica, computed once per service.
struct LoadPointModel {
  double load = 0;     // offered rate over replica_rate
  double ttft_ms = 0;  // at the SLO percentile
  double tpot_ms = 0;
  double busy = 0;       // fraction of engine time in iterations
  double in_flight = 0;  // requests in the replica (Little's law: rate x mean end-to-end)
};
struct ServiceModel {
  std::string gpu;
  long cluster_gpus = 0;
  long gpus_per_node = 0;
  long replica_gpus = 1;    // GPUs of one replica (TP x PP), or 1 with MIG
  long per_gpu = 1;         // replicas per GPU (MIG instances)
  double replica_rate = 0;  // requests/s one replica serves within the SLO (work::size_fleet)
  double weight_bytes = 0;  // a replica's weights, read from storage at start
  double storage_read_Bps = 0;
  std::string storage_source;
  std::vector<LoadPointModel> curve;                   // ascending load
  [[nodiscard]] LoadPointModel at(double load) const;  // linear between points, extended past the last
};
struct AutoscaleOptions {
  long requests = 600;  // per simulated run of the sizing and the latency curve
};
ServiceModel model_service(const ServiceSpec& s, const AutoscaleOptions& o = {});

struct AutoscaleStep {
  double time_s = 0;
  double offered_rps = 0;
  double capacity_rps = 0;  // ready replicas x replica_rate
  long desired = 0;         // the HPA's spec.replicas after this step's decision
  long ready = 0;
  long starting = 0;
  double metric = 0;      // what the HPA saw
  double ttft_ms = 0;     // the serving model's TTFT at this load (ready replicas)
  double missed = 0;      // requests beyond what ready replicas serve within the SLO
  long service_gpus = 0;  // held by the service (ready and starting)
  long training_gpus = 0;
  long preemptions = 0;  // training jobs preempted this step
};

struct AutoscaleResult {
  std::string service, model, gpu, curve;
  long cluster_gpus = 0;
  double replica_rate = 0;
  double scale_up_delay_s = 0;  // node + pod + weights load (without a preemption's checkpoint)
  double load_s = 0;            // of which reading the weights
  double duration_s = 0;
  double offered_requests = 0;
  double missed_requests = 0;
  double peak_rate = 0;
  long max_replicas_used = 0;
  long scale_ups = 0, scale_downs = 0;
  double service_gpu_hours = 0;
  double training_gpu_hours = 0;           // lent to training (GPUs its jobs held)
  double training_overhead_gpu_hours = 0;  // of which restarts and checkpoints
  long preemptions = 0;
  long fixed_replicas = 0;  // a fixed fleet for the peak at the same SLO
  long fixed_gpus = 0;
  double fixed_gpu_hours = 0;
  std::vector<AutoscaleStep> timeline;
  std::vector<LoadPointModel> latency_curve;
  std::vector<std::string> notes;
  [[nodiscard]] double slo_attainment() const {
    return offered_requests > 0 ? 1 - missed_requests / offered_requests : 1;
  }
};

AutoscaleResult simulate_autoscale(const ServiceSpec& s, const LoadCurve& curve, const ServiceModel& model);
AutoscaleResult simulate_autoscale(const ServiceSpec& s, const LoadCurve& curve, const AutoscaleOptions& o = {});

std::string autoscale_text(const AutoscaleResult& r);
nlohmann::json autoscale_json(const AutoscaleResult& r);
// One row per step: time_s,offered_rps,capacity_rps,desired,ready,starting,metric,ttft_ms,missed,
// service_gpus,training_gpus,preemptions.
std::string autoscale_timeline_csv(const AutoscaleResult& r);

}  // namespace gf::sched
