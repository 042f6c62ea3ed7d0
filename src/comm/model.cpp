#include "comm/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "comm/algorithm.hpp"
#include "comm/algorithms/patterns.hpp"
#include "comm/ecmp_flows.hpp"
#include "comm/nccl_tuner.hpp"
#include "comm/pattern.hpp"
#include "comm/pattern_tasks.hpp"
#include "comm/pipeline_fill.hpp"
#include "core/error.hpp"
#include "sim/engine.hpp"
#include "topo/ecmp_load.hpp"

namespace gf::comm {

namespace {

// NCCL's measured bus-bandwidth factor of a protocol (relative to Simple).
double protocol_factor(const Communicator& c, Op op, Algo algo, Proto p) {
  return algorithm(algo).protocol_factor(c, op, p);
}

// NCCL's cap on LL bus bandwidth, bytes/s.
double ll_cap(const Communicator& c) {
  const auto& n = c.params();
  double gbps = 0;
  if (c.nodes() == 1)
    gbps = n.ll_cap_single[std::min(2, static_cast<int>(c.gpu_generation()))];
  else
    gbps = n.ll_cap_multi[c.nodes() == 2 ? 0 : 1][c.amd_cpu() ? 1 : 0];
  return gbps * 1e9;
}

// Closed form: by symmetry every node carries what node 0 carries, so the loads of node 0's
// links (from the flows with an end on node 0) give the bottleneck. A leaf's (pod's) uplink
// bundle carries what all its nodes send out of it: node 0's share times the nodes there.
// Without `fabric`, only the node's own links count: the view NCCL's tuner has (it knows the
// node's NICs, not the switches' uplinks or their oversubscription).
double closed_form_phase(const Communicator& c, Op op, Algo algo, double size, double inflate, int phase, long root,
                         bool fabric) {
  const auto& t = c.topology();
  const auto& g = t.graph();
  const auto* f = t.fabric();
  const bool fabric_terms = fabric && f != nullptr && f->shape().tiers >= 2 && c.nodes() > 1;
  // Bytes a node sends up out of its leaf and out of its pod, on which bundles.
  struct Leaving {
    double leaf = 0;
    double pod = 0;
    long leaf_flows = 0;  // connections out of the leaf, for the ECMP hash's collisions
    std::optional<topo::LinkId> leaf_bundle;
    std::optional<topo::LinkId> pod_bundle;
  };
  // A link's part in the fabric terms.
  enum class Part { own_link, down_bundle, up_out_of_leaf, up_out_of_pod };
  auto part_of = [&](topo::LinkId l) {
    const auto& link = g.link(l);
    if (link.kind != topo::LinkKind::bundle) return Part::own_link;
    const bool core = g.device(link.dst).tier == 3;
    const bool upward = g.device(link.src).kind == topo::DeviceKind::net_switch || core;
    if (!upward) return Part::down_bundle;
    return core ? Part::up_out_of_pod : Part::up_out_of_leaf;
  };
  auto add_leaving = [](topo::LinkId l, Part part, double bytes, Leaving& out) {
    if (part == Part::up_out_of_pod) {
      out.pod += bytes;
      out.pod_bundle = l;
    } else if (part == Part::up_out_of_leaf) {
      out.leaf += bytes;
      out.leaf_bundle = l;
      ++out.leaf_flows;
    }
  };

  // Only the links of one node's flows are touched: a map, not a vector over every link of a
  // cluster that may have millions.
  std::vector<topo::LinkId> touched;
  std::unordered_map<topo::LinkId, double> load;
  Leaving leaving;
  const long node = representative_node(c, algo);
  const long cluster_node = c.cluster_node(node);
  double connection = 0;
  emit_pattern(c, op, algo, size, inflate, PatternScope{node, phase, root, &connection},
               [&](std::span<const topo::LinkId> path, double bytes) {
                 const bool from_node = !path.empty() && g.device(g.link(path.front()).src).node == cluster_node;
                 for (const auto l : path) {
                   const Part part = part_of(l);
                   if (part != Part::own_link) {
                     if (from_node) add_leaving(l, part, bytes, leaving);
                     continue;
                   }
                   auto [it, fresh] = load.try_emplace(l, 0.0);
                   if (fresh) touched.push_back(l);
                   it->second += bytes;
                 }
               });
  double worst = 0;
  const topo::DeviceId first = static_cast<topo::DeviceId>(cluster_node) * t.node().devices_per_node();
  const topo::DeviceId last = first + t.node().devices_per_node();
  auto own = [&](topo::DeviceId d) { return d >= first && d < last; };
  for (const auto l : touched) {
    const auto& link = g.link(l);
    // Links of the node itself, or network links touching its NICs.
    if (own(link.src) || own(link.dst)) worst = std::max(worst, load.at(l) / c.link_capacity(l));
  }
  if (fabric_terms) {
    const auto& s = f->shape();
    const double nics = static_cast<double>(t.node().nics());
    // Nodes whose NICs share node 0's leaf (all of a group's nodes, for rail leaves).
    const double nodes_per_leaf = std::max(
        1.0, std::min(static_cast<double>(c.nodes()),
                      s.kind == topo::FabricKind::rail ? static_cast<double>(s.down_ports) : s.down_ports / nics));
    // In a rail fabric each leaf holds one NIC per node: node 0 sends 1/nics of its traffic there.
    const double leaf_share = s.kind == topo::FabricKind::rail ? 1.0 / nics : 1.0;
    const double leaves_per_pod = static_cast<double>(s.radix / 2);
    const double nodes_per_pod = std::min(static_cast<double>(c.nodes()), s.kind == topo::FabricKind::rail
                                                                              ? nodes_per_leaf * leaves_per_pod / nics
                                                                              : nodes_per_leaf * leaves_per_pod);
    // By symmetry every node of a leaf sends out of it what the representative does.
    double leaf_out = leaving.leaf * leaf_share * nodes_per_leaf;
    double flows_out = static_cast<double>(leaving.leaf_flows) * leaf_share * nodes_per_leaf;
    double pod_out = leaving.pod * nodes_per_pod;
    auto leaf_of = [&](long k) { return f->leaf_of(c.cluster_node(k), 0); };
    // What the nodes of `leaf` send out of it, each node's own flows summed.
    auto sent_out_of = [&](long leaf, long& in_leaf) {
      Leaving sum;
      in_leaf = 0;
      for (long k = 0; k < c.nodes(); ++k) {
        if (leaf_of(k) != leaf) continue;
        const long ck = c.cluster_node(k);
        ++in_leaf;
        emit_pattern(c, op, algo, size, inflate, PatternScope{k, phase, root, nullptr},
                     [&](std::span<const topo::LinkId> path, double bytes) {
                       if (path.empty() || g.device(g.link(path.front()).src).node != ck) return;
                       for (const auto l : path) add_leaving(l, part_of(l), bytes, sum);
                     });
      }
      return sum;
    };
    if (!algorithm(algo).traits().nodes_alike) {
      // A tree's nodes differ (most of its edges join near neighbours, a few span the tree), so
      // sum what each node of the leaf the most tree edges cross sends out of it; the pod's
      // share is that leaf's average per node.
      long in_leaf = 0;
      const Leaving sum = sent_out_of(leaf_of(busiest_tree_leaf_node(c, leaf_of)), in_leaf);
      leaf_out = sum.leaf * leaf_share;
      pod_out = in_leaf > 0 ? sum.pod / static_cast<double>(in_leaf) * nodes_per_pod : 0;
      flows_out = static_cast<double>(sum.leaf_flows) * leaf_share;
      if (sum.leaf_bundle) leaving.leaf_bundle = sum.leaf_bundle;
      if (sum.pod_bundle) leaving.pod_bundle = sum.pod_bundle;
    } else if (op != Op::alltoall && s.kind == topo::FabricKind::fat_tree) {
      // A ring (or a chain of send/receive pairs) in node order leaves a fat-tree's leaf only at
      // its last node, whatever the representative node sends: sum the leaf's nodes. (All-to-all
      // sends the same out of the leaf from every node, as the representative does; on a rail
      // fabric every node's ring edge crosses rails in gpufabric's pairing, so the representative
      // already stands for each.)
      long in_leaf = 0;
      const Leaving sum = sent_out_of(leaf_of(node), in_leaf);
      if (sum.leaf * leaf_share > leaf_out) {
        leaf_out = sum.leaf * leaf_share;
        flows_out = static_cast<double>(sum.leaf_flows) * leaf_share;
        leaving.leaf_bundle = sum.leaf_bundle;
      }
    }
    double collisions = 1.0;
    if (ecmp_hashed(c)) {
      // The switches hash each queue pair onto one uplink: the busiest of the leaf's uplinks
      // (over every leaf the ranks use) carries the expected maximum of a balls-in-bins throw.
      const double flows = flows_out * flows_per_connection(c);
      const double leaves =
          std::ceil(static_cast<double>(c.nodes()) / nodes_per_leaf) * (s.kind == topo::FabricKind::rail ? nics : 1.0);
      // Two tiers with several cables from a spine to each leaf hash again on the way down.
      const double rehash = s.tiers == 2 && s.spine_links > 1 ? 2.0 : 1.0;
      collisions = topo::ecmp_slowdown(std::lround(flows), s.up_ports, std::lround(leaves * rehash));
    }
    if (leaf_out > 0 && leaving.leaf_bundle)
      worst = std::max(worst, leaf_out * collisions / c.link_capacity(*leaving.leaf_bundle));
    if (s.tiers == 3 && pod_out > 0 && leaving.pod_bundle)
      worst = std::max(worst, pod_out / c.link_capacity(*leaving.pod_bundle));
  }
  return std::max(worst, connection);
}

// Phases run one after another, so their times add up.
double closed_form(const Communicator& c, Op op, Algo algo, double size, double inflate, long root,
                   bool fabric = true) {
  double t = 0;
  for (int ph = 0; ph < phases(op, algo); ++ph) t += closed_form_phase(c, op, algo, size, inflate, ph, root, fabric);
  return t;
}

double run_engine(const sim::TaskGraph& graph, const Communicator& c) {
  const auto r = sim::simulate(graph, c.capacity());
  if (std::getenv("GPUFABRIC_SIM_STATS") != nullptr) {
    std::fprintf(stderr, "sim: %zu flows, %zu events, %zu rate recomputations\n", graph.size(), r.events,
                 r.rate_recomputations);
  }
  return r.makespan.value();
}

double flow_engine(const Communicator& c, Op op, Algo algo, double size, double inflate, long root) {
  sim::TaskGraph graph;
  const PatternTasks traffic = add_pattern_flows(graph, c, op, algo, size, inflate, root, std::nullopt);
  if (graph.size() == 0) return traffic.connection_seconds;
  return std::max(traffic.connection_seconds, run_engine(graph, c));
}

bool proto_available(const Communicator& c, Algo a, Proto p) {
  // A NIC whose NCCL plugin sets NCCL_PROTO=simple (EFA before P5) leaves Simple only across
  // nodes, for every algorithm.
  if (c.nodes() > 1 && !c.topology().network_ll_protocols() && p != Proto::simple) return false;
  if (!algorithm(a).has_protocol(p)) return false;
  if (a == Algo::p2p && p == Proto::ll && !nccl_p2p_ll_available(c)) return false;
  if (p == Proto::ll128) {
    // NCCL enables LL128 by default only over NVLink, and across nodes only with the NIC
    // close to the GPU (GPUDirect RDMA).
    return c.nvlink_intra() && (c.nodes() == 1 || c.topology().gpudirect_active());
  }
  return true;
}

}  // namespace

const char* to_string(Engine e) { return name_of(kEngineNames, e); }

bool nvls_supports(const std::string& dtype, const std::string& redop) {
  // src/include/device.h, ncclNvlsSupported (NCCL 2.30): integers, half and bfloat16 with sum,
  // min or max; float and double with sum only; no 8-bit types; prod and avg never.
  const bool minmax = redop == "min" || redop == "max";
  if (dtype == "int32" || dtype == "uint32" || dtype == "int64" || dtype == "uint64" || dtype == "half" ||
      dtype == "bfloat16")
    return redop == "sum" || minmax;
  if (dtype == "float" || dtype == "double") return redop == "sum";
  return false;
}

std::vector<std::pair<Algo, Proto>> candidates(const Communicator& c, Op op, bool nvls_type) {
  std::vector<std::pair<Algo, Proto>> out;
  for (const auto* a : all_algorithms()) {
    // Like NCCL (NCCL_COLLNET_ENABLE=0 by default), CollNet runs only when asked for, and
    // gpufabric's own algorithms only when forced.
    const bool tuned = a->traits().tuned_by_default || (a->traits().collnet && c.env().collnet_enable);
    if (!tuned || !a->available(c, op, nvls_type)) continue;
    for (int p = 0; p < kProtoCount; ++p) {
      if (proto_available(c, a->id(), static_cast<Proto>(p))) out.push_back({a->id(), static_cast<Proto>(p)});
    }
  }
  return out;
}

Seconds latency(const Communicator& c, Op op, Algo a, Proto p, bool cuda_graph, int gpus_per_process) {
  const auto& n = c.params();
  const double us = algorithm(a).latency_us(c, op, p);
  if (cuda_graph) return microseconds(us);
  // One thread launching on several GPUs: the last kernel starts (g - 1) launches after the
  // first, and the collective's own latency overlaps that chain.
  const double chain = n.launch_per_gpu_us * static_cast<double>(std::max(0, gpus_per_process - 1));
  return microseconds(std::max(us, chain) + n.launch_overhead_us);
}

namespace {

// Data time of an algorithm's traffic at the protocol's wire overhead. Every flow's bytes scale
// by the same factor, and max-min completion times scale with bytes, so one run at factor 1 is
// scaled for each protocol.
class DataTimes {
public:
  // `fabric` false: the closed form on the node's own links only (NCCL's view, for its tuner).
  DataTimes(const Communicator& c, Op op, double size, bool flow, long root = 0, bool fabric = true)
      : c_(c), op_(op), size_(size), flow_(flow), root_(root), fabric_(fabric) {}

  // The algorithm's traffic at the Simple protocol's steady rate.
  double simple(Algo algo) {
    if (size_ <= 0 || c_.ranks() < 2) return 0;
    // Linear in the size for a fixed pattern: cached per byte on the communicator.
    const long root = op_ == Op::broadcast || op_ == Op::reduce ? root_ : 0;
    const double per_byte =
        c_.data_seconds_per_byte(static_cast<int>(op_), static_cast<int>(algo), root, flow_, fabric_, [&] {
          constexpr double kReference = 1073741824.0;  // any size gives the same per-byte time
          const double t = flow_ ? flow_engine(c_, op_, algo, kReference, 1.0, root)
                                 : closed_form(c_, op_, algo, kReference, 1.0, root, fabric_);
          return t / kReference;
        });
    return per_byte * size_;
  }

  // At the protocol's wire overhead; `shape` gives the tree's shortfall and the floors too.
  double get(Algo algo, Proto proto) {
    if (size_ <= 0 || c_.ranks() < 2) return 0;
    double t = simple(algo) / protocol_factor(c_, op_, algo, proto);
    if (proto == Proto::ll) t = std::max(t, size_ * busbw_factor(op_, c_.ranks()) / ll_cap(c_));  // NCCL's LL cap
    return t;
  }

  double get(Algo algo, const WireShape& shape) {
    if (size_ <= 0 || c_.ranks() < 2) return 0;
    return std::max(simple(algo) * shape.inflate, shape.floor.value());
  }

private:
  const Communicator& c_;
  Op op_;
  double size_;
  bool flow_;
  long root_;
  bool fabric_;
};

bool uses_flow_engine(const Communicator& c, Engine e) {
  return e == Engine::flow || (e == Engine::automatic && c.ranks() <= kFlowEngineMaxRanks);
}

}  // namespace

namespace {

// The time gpufabric's model gives one (algorithm, protocol): NCCL's latency, the data moving
// through the topology, and the chunk pipeline filling.
struct Timing {
  Seconds latency;
  Seconds data;
  Seconds fill;
  [[nodiscard]] double total() const { return (latency + data + fill).value(); }
};

Timing time_of(const Communicator& c, const CollectiveRequest& req, Algo a, Proto p, bool flow,
               DataTimes* shared = nullptr) {
  Timing t;
  t.latency = latency(c, req.op, a, p, req.cuda_graph, req.gpus_per_process) +
              microseconds(algorithm(a).schedule_latency_us(c, req.op, p, req.size));
  DataTimes own(c, req.op, req.size, flow, req.root);
  DataTimes& d = shared != nullptr ? *shared : own;
  t.data = Seconds(d.get(a, wire_shape(c, req, a, p)));
  t.fill = pipeline_fill(c, req.op, a, p, req.size, t.data);
  return t;
}

// NCCL's choice: the candidate its own model (nccl_tuner) predicts fastest. Point-to-point
// operations have no tuner: the protocol follows NCCL_P2P_LL_THRESHOLD.
std::pair<Algo, Proto> choose(const Communicator& c, const CollectiveRequest& req,
                              const std::vector<std::pair<Algo, Proto>>& options) {
  if (options.size() == 1) return options.front();
  if (const auto p = algorithm(options.front().first).untuned_protocol(c, req.op, req.size)) {
    for (const auto& o : options)
      if (o.second == *p) return o;
    return options.front();
  }
  DataTimes graph(c, req.op, req.size, false, req.root, false);
  // A GPU's NVLink rate as NCCL's kernels reach it: NCCL's NVLS bandwidth starts from it.
  double nvlink_GBps = 0;
  if (c.nvls_capable()) {
    const topo::Route r = c.route(0, 1);
    if (!r.links.empty()) nvlink_GBps = c.link_capacity(r.links.front()) / 1e9;
  }
  std::pair<Algo, Proto> best = options.front();
  double best_time = std::numeric_limits<double>::infinity();
  // NCCL's graph bandwidth for an algorithm, from its own pattern or (where NCCL searches it
  // as another's, like Tree inside one node) from that one's, converted through the bus bandwidth.
  auto graph_time = [&](Algo a) {
    const Algo from = algorithm(a).nccl_graph(c, req.op);
    if (from == a) return graph.simple(a);
    const double other = graph.simple(from);
    if (!(other > 0)) return graph.simple(a);
    const double busbw = req.size / other / nccl_algbw_ratio(req.op, from, c.ranks());
    return req.size / (busbw * nccl_algbw_ratio(req.op, a, c.ranks()));
  };
  for (const auto& [a, p] : options) {
    const double t = nccl_model_time(c, req.op, a, p, req.size, Seconds(graph_time(a)), nvlink_GBps).value();
    if (t >= 0 && t < best_time) {
      best_time = t;
      best = {a, p};
    }
  }
  return best;
}

// How much faster a candidate must be in gpufabric's model before the output calls NCCL's
// choice suboptimal: well above the model's own error at mid sizes.
constexpr double kBetterBy = 0.15;

// The candidate that gpufabric's model finds clearly faster than NCCL's choice; nothing when
// the choice is good. Both are timed with the closed form, so the comparison is like for like.
std::optional<BetterChoice> better_choice(const Communicator& c, const CollectiveRequest& req,
                                          const std::vector<std::pair<Algo, Proto>>& options, Algo chosen_algo,
                                          Proto chosen_proto) {
  DataTimes closed(c, req.op, req.size, false, req.root);
  const double chosen = time_of(c, req, chosen_algo, chosen_proto, false, &closed).total();
  std::optional<BetterChoice> best;
  double best_time = chosen;
  for (const auto& [a, p] : options) {
    if (a == chosen_algo && p == chosen_proto) continue;
    const double t = time_of(c, req, a, p, false, &closed).total();
    if (t < best_time) {
      best_time = t;
      best = BetterChoice{a, p, Seconds(t), 0};
    }
  }
  if (!best || best_time > chosen * (1 - kBetterBy)) return std::nullopt;
  best->saving = 1 - best_time / chosen;
  return best;
}

}  // namespace

WireShape wire_shape(const Communicator& c, const CollectiveRequest& req, Algo a, Proto p) {
  WireShape w;
  if (req.size <= 0 || c.ranks() < 2) return w;
  WireTerms t;
  t.inflate = 1.0 / protocol_factor(c, req.op, a, p);
  if (p == Proto::ll) t.floor = req.size * busbw_factor(req.op, c.ranks()) / ll_cap(c);  // NCCL's LL cap
  algorithm(a).adjust_wire(c, req.op, p, req.size, t);  // Tree's shortfall, point-to-point's channels
  w.inflate = t.inflate;
  w.floor = Seconds(t.floor);
  return w;
}

Seconds data_time(const Communicator& c, Op op, Algo algo, Proto proto, double size, Engine engine) {
  return Seconds(DataTimes(c, op, size, uses_flow_engine(c, engine)).get(algo, proto));
}

CollectiveResult predict(const Communicator& c, const CollectiveRequest& req) {
  CollectiveResult r;
  std::optional<Algo> algo = req.algo;
  std::optional<Proto> proto = req.proto;
  if (is_point_to_point(req.op)) {
    if (algo)
      r.warnings.push_back(
          fmt::format("NCCL_ALGO does not apply to {}; NCCL runs point-to-point transfers", to_string(req.op)));
    algo = Algo::p2p;
  }
  if (algo) {
    const Algo a = *algo;
    const CollectiveAlgorithm& forced = algorithm(a);
    forced.check_hardware(c);  // an InputError where the hardware cannot run it at all
    const bool nvls_type = nvls_supports(req.dtype, req.redop);
    // (Only where the type decides: CollNetDirect's all_gather reduces nothing through NVLS.)
    if (forced.traits().needs_nvls_type && !nvls_type && forced.available(c, req.op, true) &&
        !forced.available(c, req.op, false)) {
      r.warnings.push_back(fmt::format("NVLink SHARP cannot reduce {} with {}; NCCL_ALGO={} falls back to Ring",
                                       req.dtype, req.redop, to_string(a)));
      algo = Algo::ring;
    } else if (!forced.available(c, req.op, true)) {
      const Algo fallback = forced.fallback(c, req.op);
      r.warnings.push_back(fmt::format("NCCL_ALGO={} cannot run {} on {} rank{} over {} node{}; NCCL falls back to {}",
                                       to_string(a), to_string(req.op), c.ranks(), c.ranks() == 1 ? "" : "s", c.nodes(),
                                       c.nodes() == 1 ? "" : "s", to_string(fallback)));
      algo = fallback;
    }
  }
  if (proto && *proto != Proto::simple && c.nodes() > 1 && !c.topology().network_ll_protocols()) {
    r.warnings.push_back(fmt::format(
        "NCCL_PROTO={}: this network's NCCL plugin sets NCCL_PROTO=simple because its endpoints do not deliver "
        "128-byte stores in order; forced, NCCL runs {} and the data may be corrupt",
        to_string(*proto), to_string(*proto)));
  }
  if (algo && proto && !proto_available(c, *algo, *proto)) {
    // Where the algorithm has no kernel for the protocol NCCL runs another; otherwise (LL128
    // off NVLink) a forced protocol is honoured, as NCCL_PROTO=LL128 is.
    if (const Proto runs = algorithm(*algo).forced_protocol(c, *proto); runs != *proto) {
      r.warnings.push_back(fmt::format("{} has no {} protocol; NCCL runs it with {}", to_string(*algo),
                                       to_string(*proto), to_string(runs)));
      proto = runs;
    }
  }

  // The candidates NCCL's tuner chooses among (all of them, or what NCCL_ALGO / NCCL_PROTO leave).
  std::vector<std::pair<Algo, Proto>> options;
  if (algo && proto) {
    options.push_back({*algo, *proto});
  } else {
    // The request's lists, else the communicator's NCCL_ALGO / NCCL_PROTO (--env, or the
    // network's vendor profile), narrow the candidates as NCCL's lists do.
    std::vector<Algo> algos = req.algos;
    std::vector<Proto> protos = req.protos;
    if (algos.empty() && c.env().algo) algos = parse_algo_list(*c.env().algo).value_or(std::vector<Algo>{});
    if (protos.empty() && c.env().proto) protos = parse_proto_list(*c.env().proto).value_or(std::vector<Proto>{});
    auto allowed = [&](Algo a, Proto p) {
      if (!algos.empty() && !is_point_to_point(req.op) && std::find(algos.begin(), algos.end(), a) == algos.end())
        return false;
      return protos.empty() || std::find(protos.begin(), protos.end(), p) != protos.end();
    };
    const auto all = candidates(c, req.op, nvls_supports(req.dtype, req.redop));
    for (const auto& [a, p] : all) {
      if (algo && a != *algo) continue;
      if (proto && p != *proto) continue;
      if (!allowed(a, p)) continue;
      options.push_back({a, p});
    }
    if (options.empty() && !algo && !proto && (!algos.empty() || !protos.empty())) {
      // NCCL fails such a call ("No algorithm/protocol available"); say so and show what it
      // would choose without the lists.
      r.warnings.push_back(
          fmt::format("NCCL_ALGO/NCCL_PROTO leave no algorithm for {} here (NCCL reports an "
                      "error); shown without them",
                      to_string(req.op)));
      for (const auto& o : all) options.push_back(o);
    }
    if (options.empty() && algo) {
      for (int p = 0; p < kProtoCount; ++p) {
        if (proto_available(c, *algo, static_cast<Proto>(p))) options.push_back({*algo, static_cast<Proto>(p)});
      }
    }
    if (options.empty()) options.push_back({algo.value_or(Algo::ring), proto.value_or(Proto::simple)});
  }
  const auto choice = choose(c, req, options);
  r.algo = choice.first;
  r.proto = choice.second;
  const bool flow = uses_flow_engine(c, req.engine);
  r.engine = flow ? Engine::flow : Engine::analytic;
  const Timing timed = time_of(c, req, r.algo, r.proto, flow);
  r.latency = timed.latency;
  r.data_time = timed.data;
  r.fill = timed.fill;
  r.time = r.latency + r.data_time + r.fill;
  r.channels = algorithm(r.algo).reported_channels(c, req.op, req.size);
  // Where NCCL's own model chose, say whether another candidate is clearly faster in ours.
  if (options.size() > 1) {
    r.better = better_choice(c, req, options, r.algo, r.proto);
    if (r.better) {
      r.warnings.push_back(
          fmt::format("NCCL's tuner picks {}/{} where {}/{} is faster in gpufabric's model "
                      "(NCCL_ALGO={} NCCL_PROTO={} forces it)",
                      to_string(r.algo), to_string(r.proto), to_string(r.better->algo), to_string(r.better->proto),
                      to_string(r.better->algo), to_string(r.better->proto)));
    }
  }
  r.algbw_GBps = r.time.value() > 0 ? req.size / r.time.value() / 1e9 : 0;
  r.busbw_GBps = r.algbw_GBps * busbw_factor(req.op, c.ranks());
  return r;
}

}  // namespace gf::comm
