#include "calib/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "comm/model.hpp"
#include "core/yaml_fields.hpp"
#include "topo/cluster_loader.hpp"

namespace gf::calib {

namespace {

// What the model runs with: the catalog's link efficiencies and NCCL's parameters.
struct Model {
  hw::Catalog catalog;
  comm::NcclParams nccl;
};

// One parameter: how to read it from and write it into the model, its physical range, and
// whether it lives in the catalog (so the topology must be rebuilt when it changes).
struct Knob {
  std::string name;
  std::string meaning;
  double lo = 0;
  double hi = 0;
  bool in_catalog = false;
  std::function<double(const Model&)> get;
  std::function<void(Model&, double)> set;
};

// The topologies a score needs: the cluster as described, and (for copies the driver staged
// through the host) the same cluster with peer-to-peer off.
struct Topologies {
  std::optional<topo::Topology> own;
  std::optional<topo::Topology> no_p2p;
  const topo::Topology* fixed = nullptr;  // a topology built by the caller (no catalog knobs)
  [[nodiscard]] const topo::Topology& cluster() const { return fixed ? *fixed : *own; }
};

struct Problem {
  const topo::ClusterSpec* spec = nullptr;
  const topo::Topology* fixed = nullptr;
  long ranks = 0;
  comm::NcclConfig env;
  const CalibrationInputs* in = nullptr;
  bool need_no_p2p = false;

  [[nodiscard]] Topologies build(const Model& m) const {
    Topologies t;
    if (fixed != nullptr && !need_no_p2p) {
      t.fixed = fixed;
      return t;
    }
    t.own.emplace(*spec, m.catalog);
    if (need_no_p2p) {
      topo::ClusterSpec s = *spec;
      topo::ClusterOverrides o;
      o.p2p = false;
      topo::apply_overrides(s, o, m.catalog);
      t.no_p2p.emplace(s, m.catalog);
    }
    return t;
  }
};

// The copy rate the model predicts for one measured copy.
double predict_copy(const Topologies& t, const Model& m, const CopyRow& r) {
  const topo::Topology& own = t.cluster();
  topo::Route route;
  if (r.path == CopyPath::d2d) {
    route = (r.staged && t.no_p2p ? *t.no_p2p : own).route_gpus(r.src, r.dst);
  } else {
    const int gpu = r.path == CopyPath::h2d ? r.dst : r.src;
    const int socket = own.node().socket_of(own.node().gpu(gpu));
    route = r.path == CopyPath::h2d ? own.route_memory_to_gpu(socket, gpu) : own.route_gpu_to_memory(gpu, socket);
  }
  double bw = in_GBps(route.bandwidth);
  if (r.pageable) bw *= m.catalog.pageable_copy().efficiency;
  return bw;
}

double predict_collective_us(const comm::Communicator& c, const NcclTestsLog& log, const LogRow& row) {
  comm::CollectiveRequest req;
  req.op = *comm::parse_op(log.op);
  req.size = row.size_bytes;
  req.engine = comm::Engine::analytic;
  req.gpus_per_process = std::min(log.gpus_per_process, c.ranks_per_node());
  req.cuda_graph = log.cuda_graph;
  return comm::predict(c, req).time.value() * 1e6;
}

// Sum of squared log-ratios of predicted to measured time (a copy's time is its size over its
// rate), and the mean absolute time error per file: nccl-tests logs first, then copy logs.
struct Score {
  double objective = 0;
  std::vector<double> mape;
  std::vector<double> residuals;  // log(predicted / measured) time, row by row
};

Score score(const Problem& pr, const Model& m) {
  const Topologies t = pr.build(m);
  Score s;
  std::map<long, comm::Communicator> comms;
  for (const auto& log : pr.in->nccl) {
    const long ranks = log.ranks > 0 ? log.ranks : pr.ranks;
    auto it = comms.find(ranks);
    if (it == comms.end()) it = comms.try_emplace(ranks, t.cluster(), ranks, pr.env, &m.nccl).first;
    double abs_err = 0;
    for (const auto& row : log.rows) {
      const double predicted = predict_collective_us(it->second, log, row);
      const double r = std::log(std::max(predicted, 1e-9) / row.time_us);
      s.objective += r * r;
      s.residuals.push_back(r);
      abs_err += std::fabs(predicted - row.time_us) / row.time_us;
    }
    s.mape.push_back(abs_err / static_cast<double>(log.rows.size()));
  }
  for (const auto& log : pr.in->copies) {
    double abs_err = 0;
    for (const auto& row : log.rows) {
      const double predicted = std::max(predict_copy(t, m, row), 1e-12);
      const double r = std::log(predicted / row.measured_GBps);
      s.objective += r * r;
      s.residuals.push_back(r);
      abs_err += std::fabs(row.measured_GBps / predicted - 1);  // time error: time = size / rate
    }
    s.mape.push_back(abs_err / static_cast<double>(log.rows.size()));
  }
  return s;
}

// The NCCL knobs this cluster's nccl-tests logs constrain.
void nccl_knobs(const comm::Communicator& c, int nvgen, const std::vector<NcclTestsLog>& logs, std::vector<Knob>& k) {
  bool shm = false;
  for (long b = 1; b < c.ranks_per_node(); ++b) shm = shm || c.transport(0, b) == comm::NcclTransport::shm;
  if (c.nvlink_intra() && nvgen > 0) {
    k.push_back({"nvlink_efficiency", "fraction of NVLink line rate NCCL's SM copies reach", 0.2, 1.0, false,
                 [nvgen](const Model& m) { return m.nccl.nvlink_efficiency.at(nvgen); },
                 [nvgen](Model& m, double v) { m.nccl.nvlink_efficiency[nvgen] = v; }});
  }
  if (shm) {
    k.push_back({"shm_channel_GBps", "what one SHM channel moves while its GPUs send and receive", 0.1, 50, false,
                 [](const Model& m) { return m.nccl.shm_channel_GBps; },
                 [](Model& m, double v) { m.nccl.shm_channel_GBps = v; }});
  }
  if (c.nodes() > 1) {
    if (c.transport(0, c.ranks_per_node()) == comm::NcclTransport::net_socket) {
      k.push_back({"socket_stream_GBps", "what one TCP stream of NCCL's socket transport moves", 0.05, 50, false,
                   [](const Model& m) { return m.nccl.socket_stream_GBps; },
                   [](Model& m, double v) { m.nccl.socket_stream_GBps = v; }});
    }
    const double catalog_eff = c.topology().network().efficiency;
    k.push_back({"network_efficiency", "fraction of the network's line rate NCCL reaches", 0.1, 1.0, false,
                 [catalog_eff](const Model& m) { return m.nccl.network_efficiency.value_or(catalog_eff); },
                 [net = c.topology().network().name](Model& m, double v) {
                   m.nccl.network_efficiency = v;
                   m.nccl.network_efficiency_for = net;
                 }});
  }
  // A per-call overhead shows only where it is a visible part of the time: it needs a row of at
  // most 1 MiB (a profile's single 256 MiB all_reduce cannot tell it from bandwidth).
  bool small = false;
  for (const auto& log : logs)
    for (const auto& row : log.rows) small = small || row.size_bytes <= 1048576.0;
  if (!small) return;
  k.push_back({"launch_overhead_us", "fixed time per collective call beyond NCCL's latency model", 0.0, 200, false,
               [](const Model& m) { return m.nccl.launch_overhead_us; },
               [](Model& m, double v) { m.nccl.launch_overhead_us = v; }});
}

// How many copy rows' predicted rates move when `k` moves from its value: a catalog knob is
// fitted only where the copies depend on it (a PCIe generation no copy crosses is left alone).
int rows_moved_by(const Problem& pr, const Model& m, const Knob& k) {
  Model moved = m;
  const double v = k.get(m);
  k.set(moved, v > (k.lo + k.hi) / 2 ? v * 0.8 : std::min(k.hi, v * 1.2));
  const Topologies a = pr.build(m);
  const Topologies b = pr.build(moved);
  int n = 0;
  for (const auto& log : pr.in->copies) {
    for (const auto& row : log.rows) {
      const double x = predict_copy(a, m, row);
      const double y = predict_copy(b, moved, row);
      if (std::fabs(x - y) > 1e-9 * std::max(1.0, x)) ++n;
    }
  }
  return n;
}

// The catalog knobs the copy measurements constrain; sets out.pcie_generation.
void catalog_knobs(const Problem& pr, const Model& m, int nvgen, Calibration& out, std::vector<Knob>& k) {
  if (pr.in->copies.empty()) return;
  // PCIe: the generation whose copy efficiency the most copies depend on (the GPUs' host links).
  int best_gen = 0, best_rows = 0;
  for (const auto& entry : m.catalog.pcie_generations()) {
    const int gen = entry.first;  // a named copy: Clang 14 cannot capture a structured binding
    const Knob probe{"",
                     "",
                     0.2,
                     1.0,
                     true,
                     [gen](const Model& x) { return x.catalog.pcie(gen).copy_efficiency; },
                     [gen](Model& x, double v) { x.catalog.set_pcie_copy_efficiency(gen, v); }};
    const int rows = rows_moved_by(pr, m, probe);
    if (rows > 0 && rows >= best_rows) {
      best_gen = gen;
      best_rows = rows;
    }
  }
  if (best_gen > 0) {
    out.pcie_generation = best_gen;
    k.push_back({"pcie_copy_efficiency",
                 fmt::format("fraction of PCIe Gen{} line rate a copy engine's DMA reaches", best_gen), 0.2, 1.0, true,
                 [best_gen](const Model& x) { return x.catalog.pcie(best_gen).copy_efficiency; },
                 [best_gen](Model& x, double v) { x.catalog.set_pcie_copy_efficiency(best_gen, v); }});
  }
  std::vector<Knob> more;
  if (nvgen > 0) {
    more.push_back({"nvlink_copy_efficiency",
                    fmt::format("fraction of NVLink{} line rate a copy engine's peer copy reaches", nvgen), 0.2, 1.0,
                    true, [nvgen](const Model& x) { return x.catalog.nvlink(nvgen).efficiency; },
                    [nvgen](Model& x, double v) { x.catalog.set_nvlink_efficiency(nvgen, v); }});
  }
  more.push_back({"host_staging_efficiency",
                  "fraction of its slowest link a GPU copy staged through host memory reaches (P2P off)", 0.1, 1.0,
                  true, [](const Model& x) { return x.catalog.host_staging().efficiency; },
                  [](Model& x, double v) { x.catalog.set_host_staging_efficiency(v); }});
  more.push_back({"pageable_copy_efficiency", "fraction of the pinned rate a copy from pageable memory reaches", 0.05,
                  1.0, true, [](const Model& x) { return x.catalog.pageable_copy().efficiency; },
                  [](Model& x, double v) { x.catalog.set_pageable_copy_efficiency(v); }});
  for (auto& knob : more)
    if (rows_moved_by(pr, m, knob) > 0) k.push_back(std::move(knob));
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

// Every copy row must name GPUs the cluster has, and every profile's NCCL run a rank count it
// can hold; both are errors in the measurement's file.
void check_inputs(const Problem& pr, const topo::Topology& t, const CalibrationInputs& in,
                  const comm::NcclParams& base) {
  const int gpn = t.gpus_per_node();
  for (const auto& log : in.copies) {
    for (const auto& r : log.rows) {
      for (const int gpu : {r.src, r.dst}) {
        if (gpu < 0 || gpu >= gpn) {
          throw InputError(
              {log.file, r.line, 0}, r.where,
              fmt::format("GPU {} is beyond the {} GPUs per node of '{}'", gpu, gpn, t.spec().name),
              fmt::format("GPUs 0..{}, or the cluster the measurement ran on (--preset/--cluster)", gpn - 1));
        }
      }
    }
  }
  for (const auto& log : in.nccl) {
    if (log.ranks <= 0) continue;
    try {
      (void)comm::Communicator(t, log.ranks, pr.env, &base);
    } catch (const InputError& e) {
      throw InputError({log.file, 0, 0}, "ranks", e.problem(), e.valid());
    }
  }
}

// Coordinate descent: each parameter in turn, sweeps until the objective stops improving. The
// NCCL parameters act on different sizes and links, so they are nearly independent and
// converge in a few sweeps; copy efficiencies that meet in one path (a host-staged copy runs
// at PCIe's copy rate times the staging efficiency) take more.
void descend(const Problem& pr, const std::vector<Knob>& knobs, Model& m, double start) {
  double last = start;
  for (int sweep = 0; sweep < 40; ++sweep) {
    for (const auto& k : knobs) {
      auto f = [&](double v) {
        Model trial = m;
        k.set(trial, v);
        return score(pr, trial).objective;
      };
      const double best = golden(f, k.lo, k.hi);
      if (f(best) < f(k.get(m))) k.set(m, best);
    }
    const double now = score(pr, m).objective;
    if (sweep >= 3 && last - now <= 1e-10 * (1 + last)) break;
    last = now;
  }
}

// The knobs the measurements do not pin down. For each knob the fit moved, the fit is made
// again with that knob held at the catalog's value: where the others then fit the measurements
// as well (root-mean-square time error within kSameFit of the joint fit's, below the spread
// of repeated nccl-tests runs), the knobs that moved to take up its part can stand in for it,
// and the measurements cannot say how to split the misfit among them. One 2-node all_reduce
// log, where NVLink and the network bind at once, gives NVLink and network efficiency; any
// split of its slowdown between them is a guess. Groups of such knobs, by index.
std::vector<std::vector<std::size_t>> unidentifiable(const Problem& pr, const std::vector<Knob>& knobs,
                                                     const Model& base, const Model& m, std::size_t rows) {
  constexpr double kMoved = 0.01;    // relative move that counts as fitted
  constexpr double kSameFit = 0.02;  // rms log-time error within which two fits are as good
  const double n = static_cast<double>(std::max<std::size_t>(rows, 1));
  const double joint = std::sqrt(score(pr, m).objective / n);
  auto moved = [&](const Knob& k, const Model& a, const Model& b) {
    return std::fabs(k.get(a) - k.get(b)) > kMoved * std::max(std::fabs(k.get(b)), 1e-3);
  };
  std::vector<std::vector<std::size_t>> out;
  std::vector<bool> taken(knobs.size(), false);
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    if (taken[i] || !moved(knobs[i], m, base)) continue;
    std::vector<Knob> others;
    for (std::size_t j = 0; j < knobs.size(); ++j)
      if (j != i) others.push_back(knobs[j]);
    Model without = base;
    descend(pr, others, without, score(pr, without).objective);
    if (std::sqrt(score(pr, without).objective / n) - joint > kSameFit) continue;
    std::vector<std::size_t> group{i};
    for (std::size_t j = 0; j < knobs.size(); ++j) {
      if (j != i && !taken[j] && moved(knobs[j], without, base)) group.push_back(j);
    }
    if (group.size() < 2) continue;  // nothing stands in for it: a small gain, but its own
    for (const std::size_t g : group) taken[g] = true;
    out.push_back(std::move(group));
  }
  return out;
}

Calibration fit(const Problem& pr, const Model& base) {
  Calibration out;
  const Topologies built = pr.build(base);
  const topo::Topology& t = built.cluster();
  check_inputs(pr, t, *pr.in, base.nccl);
  const comm::Communicator probe(t, pr.ranks, pr.env, &base.nccl);
  out.cluster = t.spec().name;
  out.nodes = probe.nodes();
  out.ranks = probe.ranks();
  out.network = t.network().name;
  const auto& gpu = t.gpu_spec();
  out.nvlink_generation = gpu.nvlink ? gpu.nvlink->generation : 0;
  out.notes = pr.in->notes;
  std::vector<Knob> knobs;
  if (!pr.in->nccl.empty()) nccl_knobs(probe, out.nvlink_generation, pr.in->nccl, knobs);
  catalog_knobs(pr, base, out.nvlink_generation, out, knobs);
  for (const auto& log : pr.in->copies) {
    for (const auto& r : log.rows) {
      if (r.path == CopyPath::d2d && !r.staged &&
          t.route_gpus(r.src, r.dst).transport == topo::Transport::host_staged) {
        out.notes.push_back(
            fmt::format("{}: GPUs {} and {} copied peer-to-peer, but '{}' has P2P off there; "
                        "describe the cluster with --p2p on",
                        log.file, r.src, r.dst, out.cluster));
        break;
      }
    }
  }
  Model m = base;
  const Score before = score(pr, m);
  descend(pr, knobs, m, before.objective);
  // Parameters the measurements do not pin down (one 2-node all_reduce log binds NVLink and
  // the network at once, and any split of the slowdown between them fits it) are not fitted:
  // they stay at the catalog's values, the others are fitted again without them, and a
  // warning names the measurement that would separate them.
  const auto groups = unidentifiable(pr, knobs, base, m, before.residuals.size());
  if (!groups.empty()) {
    std::vector<bool> drop(knobs.size(), false);
    for (const auto& g : groups) {
      std::string names;
      for (const std::size_t i : g) {
        drop[i] = true;
        names += (names.empty() ? "" : g.size() > 2 && i != g.back() ? ", " : " and ") + knobs[i].name;
      }
      out.notes.push_back(
          fmt::format("warning: {} each fit these measurements as well as the other: the measurements "
                      "cannot tell them apart, so neither is fitted (both stay at the catalog's "
                      "values); add a measurement only one of them governs (a single-node log for "
                      "NVLink, a log with one GPU per node for the network)",
                      names));
    }
    std::vector<Knob> kept;
    for (std::size_t i = 0; i < knobs.size(); ++i)
      if (!drop[i]) kept.push_back(knobs[i]);
    m = base;
    descend(pr, kept, m, before.objective);
    knobs = std::move(kept);
  }
  const Score after = score(pr, m);
  for (const auto& k : knobs) out.parameters.push_back({k.name, k.meaning, k.get(base), k.get(m)});
  std::size_t i = 0;
  for (const auto& log : pr.in->nccl) {
    out.files.push_back(
        {log.file, log.label.empty() ? log.op : log.label, log.rows.size(), before.mape[i], after.mape[i]});
    ++i;
  }
  for (const auto& log : pr.in->copies) {
    out.files.push_back({log.file, log.label, log.rows.size(), before.mape[i], after.mape[i]});
    ++i;
  }
  out.fitted = m.nccl;
  return out;
}

}  // namespace

Calibration calibrate(const topo::ClusterSpec& spec, const hw::Catalog& catalog, long ranks,
                      const comm::NcclConfig& env, const CalibrationInputs& inputs, const comm::NcclParams& base) {
  if (inputs.nccl.empty() && inputs.copies.empty()) {
    throw InputError({}, "--log", "nothing to fit: no nccl-tests row and no copy measurement",
                     "--log FILE, --nvbandwidth FILE or --profile FILE");
  }
  Problem pr;
  pr.spec = &spec;
  pr.ranks = ranks;
  pr.env = env;
  pr.in = &inputs;
  for (const auto& log : inputs.copies)
    for (const auto& r : log.rows) pr.need_no_p2p = pr.need_no_p2p || r.staged;
  return fit(pr, {catalog, base});
}

Calibration calibrate(const topo::Topology& t, long ranks, const comm::NcclConfig& env,
                      const std::vector<NcclTestsLog>& logs, const comm::NcclParams& base) {
  CalibrationInputs in;
  in.nccl = logs;
  Problem pr;
  pr.spec = &t.spec();
  pr.fixed = &t;
  pr.ranks = ranks;
  pr.env = env;
  pr.in = &in;
  // No copy rows: no catalog knob, so the caller's topology serves every evaluation and the
  // catalog is never read.
  return fit(pr, {hw::Catalog{}, base});
}

std::string calibration_yaml(const Calibration& c) {
  std::string out;
  out += "# gpufabric calibration overlay (docs/calibration-format.md): parameters fitted by least squares\n";
  out += "# to the measurements below; use it with --calibration FILE.\n";
  out += fmt::format("cluster: {}\nnodes: {}\nranks: {}\nnetwork: {}\nnvlink_generation: {}\n", c.cluster, c.nodes,
                     c.ranks, c.network, c.nvlink_generation);
  if (c.pcie_generation > 0) out += fmt::format("pcie_generation: {}\n", c.pcie_generation);
  out += c.parameters.empty() ? "parameters: {}\n" : "parameters:\n";
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

namespace {

// The overlay's fitted values, read and range-checked (ranges as the fit's, a little wider).
struct Overlay {
  int nvlink_generation = 0;
  int pcie_generation = 0;
  SourceLocation nvlink_where, pcie_where;
  std::string network;
  std::map<std::string, double> fitted;
};

Overlay read_overlay(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields f(
      root, file, "",
      {"cluster", "nodes", "ranks", "network", "nvlink_generation", "pcie_generation", "parameters", "residuals"});
  Overlay o;
  o.nvlink_generation = static_cast<int>(f.integer_or("nvlink_generation", 0, 5, 0));
  o.pcie_generation = static_cast<int>(f.integer_or("pcie_generation", 0, 7, 0));
  o.network = f.text_or("network", "");
  // NCCL's parameters, then the catalog's link efficiencies.
  const Fields params(
      f.node("parameters"), file, "parameters",
      {"nvlink_efficiency", "shm_channel_GBps", "socket_stream_GBps", "network_efficiency", "launch_overhead_us",
       "pcie_copy_efficiency", "nvlink_copy_efficiency", "host_staging_efficiency", "pageable_copy_efficiency"});
  auto fitted = [&](const char* key, double lo, double hi) {
    if (!params.has(key)) return;
    const Fields v(params.node(key), file, params.field(key), {"catalog", "fitted"});
    const double x = v.number("fitted");
    if (!(x >= lo && x <= hi)) v.fail("fitted", fmt::format("{} is out of range", x), fmt::format("{} to {}", lo, hi));
    o.fitted[key] = x;
  };
  fitted("nvlink_efficiency", 0.01, 1.0);
  fitted("shm_channel_GBps", 0.01, 1000);
  fitted("socket_stream_GBps", 0.01, 1000);
  fitted("network_efficiency", 0.01, 1.0);
  fitted("launch_overhead_us", 0, 10000);
  fitted("pcie_copy_efficiency", 0.01, 1.0);
  fitted("nvlink_copy_efficiency", 0.01, 1.0);
  fitted("host_staging_efficiency", 0.01, 1.0);
  fitted("pageable_copy_efficiency", 0.01, 1.0);
  if ((o.fitted.count("nvlink_efficiency") || o.fitted.count("nvlink_copy_efficiency")) && o.nvlink_generation == 0) {
    f.fail("nvlink_generation", "an NVLink efficiency needs the NVLink generation it applies to", "1-5");
  }
  if (o.fitted.count("pcie_copy_efficiency") && o.pcie_generation == 0) {
    f.fail("pcie_generation", "a PCIe copy efficiency needs the PCIe generation it applies to", "1-7");
  }
  // Where the generations were written, for an error if the catalog lacks them.
  if (root.IsMap()) {
    if (root["nvlink_generation"]) o.nvlink_where = location_of(root["nvlink_generation"], file);
    if (root["pcie_generation"]) o.pcie_where = location_of(root["pcie_generation"], file);
  }
  return o;
}

}  // namespace

comm::NcclParams apply_calibration(const std::string& text, const std::string& file, const comm::NcclParams& base) {
  const Overlay o = read_overlay(text, file);
  comm::NcclParams p = base;
  const auto& v = o.fitted;
  if (v.count("nvlink_efficiency")) p.nvlink_efficiency[o.nvlink_generation] = v.at("nvlink_efficiency");
  if (v.count("shm_channel_GBps")) p.shm_channel_GBps = v.at("shm_channel_GBps");
  if (v.count("socket_stream_GBps")) p.socket_stream_GBps = v.at("socket_stream_GBps");
  if (v.count("network_efficiency")) {
    p.network_efficiency = v.at("network_efficiency");
    p.network_efficiency_for = o.network;
  }
  if (v.count("launch_overhead_us")) p.launch_overhead_us = v.at("launch_overhead_us");
  return p;
}

void apply_calibration(const std::string& text, const std::string& file, hw::Catalog& catalog) {
  const Overlay o = read_overlay(text, file);
  const auto& v = o.fitted;
  if (v.count("pcie_copy_efficiency")) {
    catalog.set_pcie_copy_efficiency(o.pcie_generation, v.at("pcie_copy_efficiency"), o.pcie_where);
  }
  if (v.count("nvlink_copy_efficiency")) {
    catalog.set_nvlink_efficiency(o.nvlink_generation, v.at("nvlink_copy_efficiency"), o.nvlink_where);
  }
  if (v.count("host_staging_efficiency")) catalog.set_host_staging_efficiency(v.at("host_staging_efficiency"));
  if (v.count("pageable_copy_efficiency")) catalog.set_pageable_copy_efficiency(v.at("pageable_copy_efficiency"));
}

}  // namespace gf::calib
