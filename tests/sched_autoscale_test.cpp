// GPU sharing modes (time-slicing, MPS, MIG) and HPA-style elastic serving (issue 14, items 1
// and 3): the load curve, the service file, the HPA's algorithm on a replica model given by hand
// (so each rule is checked alone), and both pieces on the real serving model.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "hw/catalog.hpp"
#include "sched/autoscale.hpp"
#include "sched/load_curve.hpp"
#include "sched/sharing.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "work/model_library.hpp"

using namespace gf::sched;

namespace {

// A replica serving 1 req/s within the SLO, busy in proportion to its load, whose start takes
// pod_start_s plus 10 s of weights (10 GB at 1 GB/s).
ServiceModel toy_model(long cluster_gpus = 64) {
  ServiceModel m;
  m.gpu = "toy";
  m.cluster_gpus = cluster_gpus;
  m.gpus_per_node = 8;
  m.replica_rate = 1;
  m.weight_bytes = 10e9;
  m.storage_read_Bps = 1e9;
  m.storage_source = "test";
  m.curve = {{0.5, 100, 20, 0.5, 1}, {1.0, 200, 30, 1.0, 4}, {1.5, 800, 60, 1.0, 20}};
  return m;
}

ServiceSpec toy_service(double target = 80) {
  ServiceSpec s;
  s.name = "toy";
  s.model = "toy";
  s.hpa.metric = HpaMetric::utilization;
  s.hpa.target = target;
  s.hpa.min_replicas = 1;
  s.startup.pod_start_s = 20;
  s.training.job_gpus = 8;
  return s;
}

LoadCurve flat(double rate, double seconds) { return LoadCurve("flat", {{0, rate}, {seconds, rate}}); }

const std::string kService = R"(name: chat
model: llama3.1-8b
replica: {tp: 1, precision: bf16}
cluster: {preset: dgx-h100, nodes: 4}
lengths: {input: 512, output: 128}
slo: {ttft_ms: 500, tpot_ms: 50, percentile: 90}
hpa: {metric: queue, target: 64, min_replicas: 2, max_replicas: 32}
startup: {pod_start_s: 30, storage: nvme-gen4}
training: {job_gpus: 8, checkpoint_s: 60, restart_s: 120}
)";

// The real replica model, priced once for every test that needs it.
const ServiceModel& real_model() {
  static const ServiceModel m = model_service(parse_service(kService, "chat.yaml"), AutoscaleOptions{300});
  return m;
}

}  // namespace

// The built-in day peaks at three times its average, at noon, and never goes negative.
TEST(LoadCurve, DiurnalPeakIsThreeTimesTheAverage) {
  const LoadCurve c = diurnal_curve(10, 3, 24, 15);
  EXPECT_NEAR(c.average(), 10, 0.05);
  EXPECT_NEAR(c.peak(), 30, 1e-6);
  EXPECT_NEAR(c.rate_at(12 * 3600), 30, 1e-6);
  EXPECT_NEAR(c.rate_at(0), 10.0 / 11, 1e-6);
  for (const auto& p : c.points()) EXPECT_GE(p.rate, 0);
  EXPECT_NEAR(c.requests_between(0, 86400), 10 * 86400, 10 * 86400 * 0.005);
  const LoadCurve f = diurnal_curve(5, 1, 1, 60);
  EXPECT_NEAR(f.peak(), 5, 1e-9);
}

TEST(LoadCurve, CsvIsLinearBetweenRows) {
  const LoadCurve c = parse_load_curve("# a comment\ntime_s,rate\n0,1\n100,3\n\n200,3 # flat\n", "c.csv");
  ASSERT_EQ(c.points().size(), 3u);
  EXPECT_DOUBLE_EQ(c.rate_at(50), 2);
  EXPECT_DOUBLE_EQ(c.rate_at(500), 3);
  EXPECT_DOUBLE_EQ(c.requests_between(0, 200), 200 + 300);
  const LoadCurve e = load_curve_csv(std::string(GPUFABRIC_SOURCE_DIR) + "/data/services/diurnal-example.csv");
  EXPECT_NEAR(e.peak() / e.average(), 3, 0.3);
}

// A bad row is refused at its line, naming the field.
TEST(LoadCurve, BadRowNamesItsLine) {
  auto line_of = [](const std::string& text, const std::string& field) {
    try {
      (void)parse_load_curve(text, "load.csv");
    } catch (const gf::InputError& e) {
      EXPECT_EQ(e.where().file, "load.csv");
      EXPECT_EQ(e.field(), field) << e.what();
      return e.where().line;
    }
    ADD_FAILURE() << "accepted: " << text;
    return -1;
  };
  EXPECT_EQ(line_of("time_s,rate\n0,1\n60,2\n120,abc\n", "rate"), 4);
  EXPECT_EQ(line_of("time_s,rate\n0,1\n60,-2\n", "rate"), 3);
  EXPECT_EQ(line_of("0,1\n60,2\n60,3\n", "time_s"), 3);
  EXPECT_EQ(line_of("0,1\n60\n", "row"), 2);
  EXPECT_EQ(line_of("0,1\n60,2,3\n", "row"), 2);
  EXPECT_EQ(line_of("0,1\nnan,2\n", "time_s"), 2);
  EXPECT_THROW((void)parse_load_curve("time_s,rate\n0,1\n", "one.csv"), gf::InputError);
  EXPECT_THROW((void)load_curve_csv("/nonexistent/curve.csv"), gf::InputError);
}

TEST(ServiceFile, ReadsTheExampleAndRefusesBadFields) {
  const ServiceSpec s = load_service(std::string(GPUFABRIC_SOURCE_DIR) + "/data/services/llama3.1-8b-chat.yaml");
  EXPECT_EQ(s.model, "llama3.1-8b");
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.hpa.metric, HpaMetric::queue);
  EXPECT_DOUBLE_EQ(s.hpa.scale_down_stabilization_s, 300);
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, 0.5);
  auto field_of = [](const std::string& text) {
    try {
      (void)parse_service(text, "s.yaml");
    } catch (const gf::InputError& e) {
      EXPECT_EQ(e.where().file, "s.yaml");
      EXPECT_GT(e.where().line, 0) << e.what();
      return e.field();
    }
    return std::string("accepted");
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = kService;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  EXPECT_EQ(field_of(with("metric: queue", "metric: cpu")), "hpa.metric");
  EXPECT_EQ(field_of(with("model: llama3.1-8b", "model: llama9")), "model");
  EXPECT_EQ(field_of(with("preset: dgx-h100", "preset: dgx-h1000")), "cluster.preset");
  EXPECT_EQ(field_of(with("max_replicas: 32", "max_replicas: 1")), "hpa.max_replicas");
  EXPECT_EQ(field_of(with("storage: nvme-gen4", "storage: floppy")), "startup.storage");
  EXPECT_EQ(field_of(kService + "sede: 1\n"), "sede");  // unknown key
  EXPECT_EQ(field_of(kService + "seed: 1\n"), "accepted");
}

// Within the tolerance the HPA leaves the replicas alone; outside it, it asks for
// ceil(current x metric / target).
TEST(Hpa, ToleranceAndTheRatio) {
  const ServiceModel m = toy_model();
  // 4 req/s on 4 replicas: busy 100%. Target 95%: the ratio 1.05 is within 10%.
  const AutoscaleResult within = simulate_autoscale(toy_service(95), flat(4, 3600), m);
  EXPECT_EQ(within.scale_ups + within.scale_downs, 0);
  for (const auto& s : within.timeline) EXPECT_EQ(s.desired, 4);
  // Target 80%: ratio 1.25, ceil(4 x 1.25) = 5, and busy 80% at 5 replicas holds it there.
  const AutoscaleResult above = simulate_autoscale(toy_service(80), flat(4, 3600), m);
  EXPECT_EQ(above.timeline.front().desired, 5);
  EXPECT_EQ(above.timeline.back().ready, 5);
  EXPECT_EQ(above.scale_ups, 1);
}

// min_replicas holds in the trough, max_replicas at the peak (which then misses the SLO).
TEST(Hpa, MinAndMaxReplicas) {
  ServiceSpec s = toy_service(60);
  s.hpa.min_replicas = 3;
  s.hpa.max_replicas = 6;
  const AutoscaleResult r = simulate_autoscale(s, diurnal_curve(4, 3, 24, 60), toy_model());
  long lo = 1 << 20, hi = 0;
  for (const auto& x : r.timeline) {
    lo = std::min(lo, x.desired);
    hi = std::max(hi, x.desired);
    EXPECT_LE(x.ready + x.starting, 6);
  }
  EXPECT_EQ(lo, 3);
  EXPECT_EQ(hi, 6);
  EXPECT_GT(r.missed_requests, 0);  // a 12 req/s peak on 6 replicas of 1 req/s
  EXPECT_EQ(r.fixed_replicas, 12);
}

// After a drop in load, the replicas stay for the 300 s stabilization window, then go.
TEST(Hpa, ScaleDownWaitsForTheStabilizationWindow) {
  const LoadCurve c("step", {{0, 8}, {1800, 8}, {1800.001, 2}, {3600, 2}});
  const AutoscaleResult r = simulate_autoscale(toy_service(100), c, toy_model());
  for (const auto& x : r.timeline) {
    if (x.time_s < 1800 + 300 - 15) {
      EXPECT_EQ(x.desired, 8) << x.time_s;
    } else if (x.time_s >= 1800 + 300 + 15) {
      EXPECT_EQ(x.desired, 2) << x.time_s;
    }
  }
}

// A rise in load is missed until new replicas are ready: the longer their start, the more.
TEST(Hpa, LongerScaleUpDelayMissesMore) {
  const LoadCurve c = diurnal_curve(8, 3, 24, 60);
  ServiceSpec fast = toy_service(70), slow = toy_service(70);
  fast.startup.pod_start_s = 10;
  slow.startup.pod_start_s = 1800;
  const AutoscaleResult a = simulate_autoscale(fast, c, toy_model());
  const AutoscaleResult b = simulate_autoscale(slow, c, toy_model());
  EXPECT_DOUBLE_EQ(a.scale_up_delay_s, 20);
  EXPECT_DOUBLE_EQ(b.scale_up_delay_s, 1810);
  EXPECT_GT(b.missed_requests, 2 * a.missed_requests + 1);
  EXPECT_LT(b.slo_attainment(), a.slo_attainment());
}

// Training takes what the service leaves, and gives it back (preempted) when the service grows.
TEST(Hpa, TrainingBorrowsTheTroughs) {
  const AutoscaleResult r = simulate_autoscale(toy_service(60), diurnal_curve(20, 3, 24, 60), toy_model(64));
  EXPECT_GT(r.training_gpu_hours, 0);
  EXPECT_GT(r.preemptions, 0);
  EXPECT_GT(r.training_overhead_gpu_hours, 0);
  for (const auto& x : r.timeline) EXPECT_LE(x.service_gpus + x.training_gpus, 64) << x.time_s;
  EXPECT_LE(r.service_gpu_hours + r.training_gpu_hours, 64 * 24 + 1e-6);
  const std::string csv = autoscale_timeline_csv(r);
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), r.timeline.size() + 1);
  const auto j = autoscale_json(r);
  EXPECT_EQ(j["timeline"].size(), r.timeline.size());
  EXPECT_EQ(j["preemptions"].get<long>(), r.preemptions);
}

// On the serving model: Llama 3.1 8B on an H100 at 500 ms TTFT; the day's autoscaled fleet
// burns fewer GPU-hours than a fleet fixed for the peak, and lends the rest to training.
TEST(AutoscaleServing, BeatsTheFixedFleetOnTheDiurnalDay) {
  const ServiceModel& m = real_model();
  EXPECT_EQ(m.cluster_gpus, 32);
  EXPECT_GT(m.replica_rate, 0.5);
  // TTFT grows with the load, and the busy time with it.
  EXPECT_LT(m.curve.front().ttft_ms, m.curve.back().ttft_ms);
  EXPECT_LT(m.curve.front().busy, m.curve.back().busy);
  // Weights: 8B in bf16 (about 16 GB) over a 7.45 GB/s NVMe drive.
  EXPECT_NEAR(m.weight_bytes / m.storage_read_Bps, 16.06e9 / 7.45e9, 0.3);
  const ServiceSpec s = parse_service(kService, "chat.yaml");
  const LoadCurve day = diurnal_curve(3 * m.replica_rate, 3, 24, 15);
  const AutoscaleResult r = simulate_autoscale(s, day, m);
  EXPECT_EQ(r.timeline.size(), 24u * 3600 / 15);
  EXPECT_LT(r.service_gpu_hours, 0.8 * r.fixed_gpu_hours);
  EXPECT_GE(r.fixed_replicas, 9);
  EXPECT_GT(r.training_gpu_hours, 0);
  EXPECT_GT(r.slo_attainment(), 0.99);
  EXPECT_NE(autoscale_text(r).find("GPU-hours"), std::string::npos);
}

namespace {

gf::topo::Topology h100() {
  const auto catalog = gf::hw::Catalog::builtin();
  auto spec = gf::topo::load_preset("dgx-h100", catalog);
  gf::topo::ClusterOverrides o;
  o.nodes = 1;
  gf::topo::apply_overrides(spec, o, catalog);
  return gf::topo::Topology(spec, catalog);
}

SharingRequest request(long k, double rate) {
  SharingRequest q;
  q.model = gf::work::library_model("llama3.1-8b");
  q.jobs = k;
  q.rate = rate;
  q.input = gf::work::LengthDistribution(512);
  q.output = gf::work::LengthDistribution(128);
  q.requests = 300;
  return q;
}

const ModeResult& mode(const SharingReport& r, SharingMode m) {
  for (const auto& x : r.modes)
    if (x.mode == m) return x;
  throw std::logic_error("mode missing");
}

}  // namespace

// Saturated, two time-sliced replicas each serve about half of what one replica serves on the
// whole GPU (less the context switches); the isolation follows NVIDIA's table.
TEST(Sharing, TimeSlicingHalvesEachReplica) {
  const auto t = h100();
  gf::work::TrainingContext ctx(t);
  const SharingReport r = compare_sharing(ctx, request(2, 200));
  const ModeResult& whole = mode(r, SharingMode::whole);
  const ModeResult& ts = mode(r, SharingMode::time_slicing);
  const double ratio = ts.per_replica.requests_per_s / whole.per_replica.requests_per_s;
  EXPECT_GT(ratio, 0.4);
  EXPECT_LT(ratio, 0.55);
  EXPECT_NEAR(ts.stretch, 2 * 1.024, 0.01);
  EXPECT_NEAR(ts.throughput_rps / whole.throughput_rps, 2 * ratio, 1e-9);
  EXPECT_FALSE(ts.isolation.memory_protection || ts.isolation.fault_isolation || ts.isolation.bandwidth_qos);
  const ModeResult& mps = mode(r, SharingMode::mps);
  EXPECT_TRUE(mps.isolation.memory_protection);
  EXPECT_TRUE(mps.isolation.sm_isolation);
  EXPECT_FALSE(mps.isolation.bandwidth_qos);
  EXPECT_FALSE(mps.isolation.fault_isolation);
  const ModeResult& mig = mode(r, SharingMode::mig);
  EXPECT_TRUE(mig.isolation.memory_protection && mig.isolation.sm_isolation && mig.isolation.bandwidth_qos &&
              mig.isolation.fault_isolation);
  EXPECT_NE(mig.detail.find("3g.40gb"), std::string::npos) << mig.detail;
  EXPECT_EQ(mig.replicas, 2);
  EXPECT_TRUE(mig.fits);
  // A 3g slice has 3/7 of the SMs and half the bandwidth: slower than the whole GPU.
  EXPECT_LT(mig.per_replica.requests_per_s, 0.7 * whole.per_replica.requests_per_s);
  EXPECT_NE(sharing_text(r).find("time-slicing"), std::string::npos);
  EXPECT_EQ(sharing_json(r)["modes"].size(), 4u);
}

// Lightly loaded, the others are rarely busy: sharing costs far less than k.
TEST(Sharing, LightLoadSlowsLittleAndMemoryBoundsTheReplicas) {
  const auto t = h100();
  gf::work::TrainingContext ctx(t);
  const SharingReport r = compare_sharing(ctx, request(4, 0.05));
  const ModeResult& ts = mode(r, SharingMode::time_slicing);
  EXPECT_LT(ts.stretch, 2.0);
  EXPECT_GT(ts.stretch, 1.0);
  // 16 GB of weights and the activation workspace each: an 80 GB H100 holds a few, not 48.
  EXPECT_GE(ts.replicas_fit, 3);
  EXPECT_LT(ts.replicas_fit, 8);
  EXPECT_EQ(mode(r, SharingMode::mps).replicas_fit, ts.replicas_fit);
  // 4 instances: the largest profile with 4 is 1g.20gb (H100 80GB has 7 of 1g.10gb, 4 of 1g.20gb).
  EXPECT_EQ(mode(r, SharingMode::mig).replicas, 4);
  EXPECT_THROW((void)compare_sharing(ctx, request(0, 1)), gf::InputError);
}
