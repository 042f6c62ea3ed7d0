#include "comm/collective_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "band/band_class.hpp"
#include "comm/algorithm.hpp"
#include "core/error.hpp"

namespace gf::comm {

namespace {

constexpr int kMaxSizes = 4096;

// NCCL_ALGO / NCCL_PROTO of the request, or else of its environment, as the request's forcing.
void apply_algo_proto(const CollectiveSweepRequest& r, const NcclConfig& nccl, CollectiveRequest& req) {
  const std::string algo = !r.algo.empty() ? r.algo : nccl.algo.value_or("");
  const std::string proto = !r.proto.empty() ? r.proto : nccl.proto.value_or("");
  if (!algo.empty()) {
    const auto list = parse_algo_list(algo);
    if (!list) {
      throw InputError({}, r.algo.empty() ? "env NCCL_ALGO" : sweep_field::algo, "unknown algorithm '" + algo + "'",
                       algo_name_list() + ", a list of them (Ring,Tree) or '^' and a list to leave out");
    }
    if (list->size() == 1 && algo.front() != '^')
      req.algo = list->front();
    else
      req.algos = *list;
  }
  if (!proto.empty()) {
    const auto list = parse_proto_list(proto);
    if (!list)
      throw InputError({}, r.proto.empty() ? "env NCCL_PROTO" : sweep_field::proto, "unknown protocol '" + proto + "'",
                       "LL, LL128, Simple, a list of them or '^' and a list to leave out");
    if (list->size() == 1 && proto.front() != '^')
      req.proto = list->front();
    else
      req.protos = *list;
  }
}

// The per-size request: everything but the size, checked.
CollectiveRequest base_request(const CollectiveSweepRequest& r, const NcclConfig& nccl) {
  const auto op = parse_op(r.op);
  if (!op) {
    const auto names = op_names();
    const std::string hint = suggest(r.op, names);
    throw InputError({}, sweep_field::op,
                     "unknown collective '" + r.op + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                     join(names));
  }
  if (!parse_dtype(r.dtype))
    throw InputError({}, sweep_field::dtype, "unknown data type '" + r.dtype + "'", join(dtype_names()));
  const auto ops = redop_names();
  if (std::find(ops.begin(), ops.end(), r.redop) == ops.end())
    throw InputError({}, sweep_field::redop, "unknown reduction '" + r.redop + "'", join(ops));
  CollectiveRequest req;
  req.op = *op;
  req.dtype = r.dtype;
  req.redop = r.redop;
  req.cuda_graph = r.cuda_graph;
  apply_algo_proto(r, nccl, req);
  if (r.engine == "flow")
    req.engine = Engine::flow;
  else if (r.engine == "analytic")
    req.engine = Engine::analytic;
  else if (r.engine != "auto")
    throw InputError({}, sweep_field::engine, "got '" + r.engine + "'", "flow, analytic, auto");
  return req;
}

void check_ranks(const Communicator& c, const topo::Topology& t, const CollectiveSweepRequest& r) {
  if (c.ranks() < 2) {
    throw InputError({}, sweep_field::ranks, "one rank: a collective over a single GPU moves nothing between GPUs",
                     "2 or more ranks (or every GPU)");
  }
  if ((r.dtype == "f8e4m3" || r.dtype == "f8e5m2") && c.gpu_generation() < GpuGeneration::hopper) {
    throw InputError(
        {}, sweep_field::dtype,
        fmt::format("NCCL reduces fp8 ({}) only on sm90 (Hopper) and newer; {} is older", r.dtype, t.gpu_spec().name),
        "float, half, bfloat16, or a Hopper or newer GPU");
  }
  if (r.root < 0 || r.root > c.ranks() - 1)
    throw InputError({}, sweep_field::root, fmt::format("got '{}'", r.root),
                     fmt::format("a whole number from 0 to {}", c.ranks() - 1));
  if (r.gpus_per_process < 1 || r.gpus_per_process > c.ranks_per_node())
    throw InputError({}, sweep_field::gpus_per_process, fmt::format("got '{}'", r.gpus_per_process),
                     fmt::format("a whole number from 1 to {}", c.ranks_per_node()));
}

}  // namespace

band::CollectivePath band_path(const topo::Topology& t, long nodes) {
  band::CollectivePath p;
  p.multi_node = nodes > 1;
  const auto& spec = t.spec();
  const bool pcie_p2p = t.gpu_spec().p2p_supported || spec.p2p_patched_driver;
  switch (spec.node.gpu_fabric) {
    case topo::GpuFabric::nvswitch: p.gpu_fabric = "nvswitch"; break;
    case topo::GpuFabric::nvlink_mesh: p.gpu_fabric = "nvlink"; break;
    case topo::GpuFabric::pcie: p.gpu_fabric = pcie_p2p ? "pcie" : "no-p2p"; break;
  }
  if (!spec.p2p) p.gpu_fabric = "no-p2p";
  p.network_family = t.network().family;
  p.network_transport = t.network().transport;
  return p;
}

std::vector<double> size_steps(double min, double max, long factor, double step) {
  std::vector<double> out;
  for (double s = min; s <= max; s = step > 0 ? s + step : s * static_cast<double>(factor)) {
    if (static_cast<int>(out.size()) >= kMaxSizes)
      throw InputError({}, sweep_field::sizes, fmt::format("the size sweep has more than {} steps", kMaxSizes),
                       "a larger step or factor");
    out.push_back(s);
    if (step <= 0 && factor < 2) break;
  }
  return out;
}

CollectiveSweep sweep_collective(const topo::Topology& topology, const NcclParams& params,
                                 const CollectiveSweepRequest& r) {
  NcclConfig nccl;
  std::vector<std::string> ignored;
  // The environment's and the communicator's own checks name the CLI's flags; the request's
  // fields are what a library caller set.
  try {
    for (const auto& e : r.env) apply_nccl_assignment(nccl, e, &ignored);
  } catch (const InputError& e) {
    throw InputError(e.where(), sweep_field::env, e.problem(), e.valid());
  }
  CollectiveRequest req = base_request(r, nccl);
  if (r.ranks < 0 || r.ranks > topo::kMaxGpus)
    throw InputError({}, sweep_field::ranks, fmt::format("got '{}'", r.ranks),
                     fmt::format("0 (every GPU) or 2 to {}", topo::kMaxGpus));
  const Communicator c = [&] {
    try {
      return Communicator(topology, r.ranks, nccl, &params);
    } catch (const InputError& e) {
      if (e.field() != "--gpus") throw;
      throw InputError(e.where(), sweep_field::ranks, e.problem(), e.valid());
    }
  }();
  check_ranks(c, topology, r);
  const bool rooted = req.op == Op::broadcast || req.op == Op::reduce;
  req.gpus_per_process = r.gpus_per_process;
  req.root = r.root;
  const double element = parse_dtype(r.dtype)->bytes;
  const band::CollectivePath path = band_path(topology, c.nodes());
  const double unit = element * (splits_by_rank(req.op) ? static_cast<double>(c.ranks()) : 1.0);
  CollectiveSweep out;
  for (const double asked : r.sizes) {
    const double size = std::floor(asked / unit) * unit;
    if (size <= 0) continue;
    req.size = size;
    CollectiveSweepRow row;
    row.size_bytes = size;
    row.count = static_cast<long>(size / element);
    row.type = r.dtype;
    // nccl-tests prints the -o operation for the reductions and for sendrecv (whose test loops
    // over the ops like a reduction does); the others print "none".
    row.redop = is_reduction(req.op) || req.op == Op::sendrecv ? r.redop : "none";
    row.root = rooted ? static_cast<int>(r.root) : -1;
    row.result = predict(c, req);
    row.band = band::BandTable::builtin().lookup("collectives", band::collective_classes(size, path));
    out.rows.push_back(row);
  }
  if (out.rows.empty()) {
    throw InputError({}, sweep_field::sizes,
                     fmt::format("every size is below one {} element per rank ({} bytes)", r.dtype, unit),
                     fmt::format("a size of at least {}", unit));
  }
  out.op = to_string(req.op);
  out.cluster = topology.spec().name;
  out.engine = to_string(out.rows.front().result.engine);
  for (const auto& v : nccl.describe()) out.notes.push_back("env: " + v);
  for (const auto& v : ignored)
    out.notes.push_back("env: " + v + " is not modelled (it does not change the prediction)");
  out.notes.insert(out.notes.end(), topology.notes().begin(), topology.notes().end());
  out.notes.insert(out.notes.end(), c.notes().begin(), c.notes().end());
  out.comm = summarize(c);
  return out;
}

}  // namespace gf::comm
