#include "calib/calibrate.hpp"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "comm/model.hpp"
#include "core/yaml_fields.hpp"

namespace gf::calib {

namespace {

// One parameter: how to read it from and write it into a parameter set, and its physical range.
struct Knob {
  std::string name;
  std::string meaning;
  double lo = 0;
  double hi = 0;
  std::function<double(const comm::NcclParams&)> get;
  std::function<void(comm::NcclParams&, double)> set;
};

// Sum of squared log-ratios of predicted to measured time, and the mean absolute time error
// per file.
struct Score {
  double objective = 0;
  std::vector<double> mape;
};

Score score(const topo::Topology& t, long ranks, const comm::NcclConfig& env, const std::vector<NcclTestsLog>& logs,
            const comm::NcclParams& p) {
  const comm::Communicator c(t, ranks, env, &p);
  Score s;
  for (const auto& log : logs) {
    double abs_err = 0;
    for (const auto& row : log.rows) {
      comm::CollectiveRequest req;
      req.op = *comm::parse_op(log.op);
      req.size = row.size_bytes;
      req.engine = comm::Engine::analytic;
      req.gpus_per_process = std::min(log.gpus_per_process, c.ranks_per_node());
      req.cuda_graph = log.cuda_graph;
      const double predicted = comm::predict(c, req).time.value() * 1e6;
      const double r = std::log(std::max(predicted, 1e-9) / row.time_us);
      s.objective += r * r;
      abs_err += std::fabs(predicted - row.time_us) / row.time_us;
    }
    s.mape.push_back(abs_err / static_cast<double>(log.rows.size()));
  }
  return s;
}

// The knobs this cluster's logs constrain.
std::vector<Knob> knobs_for(const comm::Communicator& c, int nvgen) {
  std::vector<Knob> k;
  bool shm = false;
  for (long b = 1; b < c.ranks_per_node(); ++b) shm = shm || c.transport(0, b) == comm::NcclTransport::shm;
  if (c.nvlink_intra() && nvgen > 0) {
    k.push_back({"nvlink_efficiency", "fraction of NVLink line rate NCCL's SM copies reach", 0.2, 1.0,
                 [nvgen](const comm::NcclParams& p) { return p.nvlink_efficiency.at(nvgen); },
                 [nvgen](comm::NcclParams& p, double v) { p.nvlink_efficiency[nvgen] = v; }});
  }
  if (shm) {
    k.push_back({"shm_channel_GBps", "what one SHM channel moves while its GPUs send and receive", 0.1, 50,
                 [](const comm::NcclParams& p) { return p.shm_channel_GBps; },
                 [](comm::NcclParams& p, double v) { p.shm_channel_GBps = v; }});
  }
  if (c.nodes() > 1) {
    if (c.transport(0, c.ranks_per_node()) == comm::NcclTransport::net_socket) {
      k.push_back({"socket_stream_GBps", "what one TCP stream of NCCL's socket transport moves", 0.05, 50,
                   [](const comm::NcclParams& p) { return p.socket_stream_GBps; },
                   [](comm::NcclParams& p, double v) { p.socket_stream_GBps = v; }});
    }
    const double catalog_eff = c.topology().network().efficiency;
    k.push_back({"network_efficiency", "fraction of the network's line rate NCCL reaches", 0.1, 1.0,
                 [catalog_eff](const comm::NcclParams& p) { return p.network_efficiency.value_or(catalog_eff); },
                 [net = c.topology().network().name](comm::NcclParams& p, double v) {
                   p.network_efficiency = v;
                   p.network_efficiency_for = net;
                 }});
  }
  k.push_back({"launch_overhead_us", "fixed time per collective call beyond NCCL's latency model", 0.0, 200,
               [](const comm::NcclParams& p) { return p.launch_overhead_us; },
               [](comm::NcclParams& p, double v) { p.launch_overhead_us = v; }});
  return k;
}

// Golden-section search for the minimum of f on [lo, hi].
double golden(const std::function<double(double)>& f, double lo, double hi) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi;
  double x1 = b - g * (b - a), x2 = a + g * (b - a);
  double f1 = f(x1), f2 = f(x2);
  for (int i = 0; i < 40 && b - a > 1e-6 * (1 + std::fabs(a)); ++i) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = f(x2);
    }
  }
  return (a + b) / 2;
}

}  // namespace

Calibration calibrate(const topo::Topology& t, long ranks, const comm::NcclConfig& env,
                      const std::vector<NcclTestsLog>& logs, const comm::NcclParams& base) {
  Calibration out;
  const comm::Communicator probe(t, ranks, env, &base);
  out.cluster = t.spec().name;
  out.nodes = probe.nodes();
  out.ranks = probe.ranks();
  out.network = t.network().name;
  const auto& gpu = t.gpu_spec();
  out.nvlink_generation = gpu.nvlink ? gpu.nvlink->generation : 0;
  const auto knobs = knobs_for(probe, out.nvlink_generation);
  comm::NcclParams p = base;
  const Score before = score(t, ranks, env, logs, p);
  // Coordinate descent: each parameter in turn, a few sweeps (the parameters act on different
  // sizes and links, so they are nearly independent and this converges quickly).
  for (int sweep = 0; sweep < 4; ++sweep) {
    for (const auto& k : knobs) {
      auto f = [&](double v) {
        comm::NcclParams trial = p;
        k.set(trial, v);
        return score(t, ranks, env, logs, trial).objective;
      };
      const double best = golden(f, k.lo, k.hi);
      if (f(best) < f(k.get(p))) k.set(p, best);
    }
  }
  const Score after = score(t, ranks, env, logs, p);
  for (const auto& k : knobs) out.parameters.push_back({k.name, k.meaning, k.get(base), k.get(p)});
  for (std::size_t i = 0; i < logs.size(); ++i) {
    out.files.push_back({logs[i].file, logs[i].op, logs[i].rows.size(), before.mape[i], after.mape[i]});
  }
  out.fitted = p;
  return out;
}

std::string calibration_yaml(const Calibration& c) {
  std::string out;
  out += "# gpufabric calibration overlay (docs/calibration-format.md): parameters fitted by least squares\n";
  out += "# to the nccl-tests logs below; use it with --calibration FILE.\n";
  out += fmt::format("cluster: {}\nnodes: {}\nranks: {}\nnetwork: {}\nnvlink_generation: {}\n", c.cluster, c.nodes,
                     c.ranks, c.network, c.nvlink_generation);
  out += "parameters:\n";
  for (const auto& p : c.parameters) {
    out += fmt::format("  {}: {{catalog: {:.6g}, fitted: {:.6g}}}  # {}\n", p.name, p.catalog, p.fitted, p.meaning);
  }
  out += "residuals:\n";
  for (const auto& f : c.files) {
    out += fmt::format("  - {{file: \"{}\", op: {}, rows: {}, time_mape_catalog: {:.4f}, time_mape_fitted: {:.4f}}}\n",
                       f.file, f.op, f.rows, f.mape_catalog, f.mape_fitted);
  }
  return out;
}

comm::NcclParams apply_calibration(const std::string& text, const std::string& file, const comm::NcclParams& base) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields f(root, file, "",
                 {"cluster", "nodes", "ranks", "network", "nvlink_generation", "parameters", "residuals"});
  comm::NcclParams p = base;
  const int gen = static_cast<int>(f.integer_or("nvlink_generation", 0, 5, 0));
  const Fields params(
      f.node("parameters"), file, "parameters",
      {"nvlink_efficiency", "shm_channel_GBps", "socket_stream_GBps", "network_efficiency", "launch_overhead_us"});
  auto fitted = [&](const char* key, double lo, double hi) {
    const Fields v(params.node(key), file, params.field(key), {"catalog", "fitted"});
    const double x = v.number("fitted");
    if (!(x >= lo && x <= hi)) v.fail("fitted", fmt::format("{} is out of range", x), fmt::format("{} to {}", lo, hi));
    return x;
  };
  if (params.has("nvlink_efficiency")) {
    if (gen == 0) f.fail("nvlink_generation", "an NVLink efficiency needs the NVLink generation it applies to", "1-5");
    p.nvlink_efficiency[gen] = fitted("nvlink_efficiency", 0.01, 1.0);
  }
  if (params.has("shm_channel_GBps")) p.shm_channel_GBps = fitted("shm_channel_GBps", 0.01, 1000);
  if (params.has("socket_stream_GBps")) p.socket_stream_GBps = fitted("socket_stream_GBps", 0.01, 1000);
  if (params.has("network_efficiency")) {
    p.network_efficiency = fitted("network_efficiency", 0.01, 1.0);
    p.network_efficiency_for = f.text_or("network", "");
  }
  if (params.has("launch_overhead_us")) p.launch_overhead_us = fitted("launch_overhead_us", 0, 10000);
  return p;
}

}  // namespace gf::calib
