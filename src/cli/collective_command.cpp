#include "cli/collective_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "band/band_class.hpp"
#include "band/error_band.hpp"
#include "calib/calibrate.hpp"
#include "comm/algorithm.hpp"
#include "comm/model.hpp"
#include "comm/nccl_config.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "report/collective_report.hpp"
#include "topo/topology.hpp"
#include "validate/error_classes.hpp"

namespace gf::cli {

namespace {

constexpr double kMaxSize = 1099511627776.0;  // 1 TiB per rank buffer

}  // namespace

double parse_size(const std::string& flag, const std::string& text) {
  if (text.empty()) throw InputError({}, flag, "empty size", "a byte count such as 8, 64K, 128M or 8G");
  std::string digits = text;
  double mult = 1;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    digits = text.substr(0, text.size() - 1);
    mult = last == 'K' ? 1024.0 : last == 'M' ? 1048576.0 : last == 'G' ? 1073741824.0 : 1099511627776.0;
  }
  long long v = 0;
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || v < 1) {
    throw InputError({}, flag, "got '" + text + "'", "a positive byte count such as 8, 64K, 128M or 8G");
  }
  const double bytes = static_cast<double>(v) * mult;
  if (bytes > kMaxSize) throw InputError({}, flag, "got '" + text + "', more than 1 TiB", "at most 1T");
  return bytes;
}

BackgroundCollective parse_background(const std::string& flag, const std::string& text) {
  const auto colon = text.find(':');
  const auto op = colon == std::string::npos ? std::nullopt : comm::parse_op(text.substr(0, colon));
  if (!op || *op == comm::Op::sendrecv)
    throw InputError({}, flag, "got '" + text + "'",
                     "OP:SIZE with a collective OP (all_reduce, all_gather, reduce_scatter, alltoall, ...), e.g. "
                     "all_reduce:1G");
  return {*op, parse_size(flag, text.substr(colon + 1))};
}

void CollectiveOptions::add_to(CLI::App& app) {
  app.add_option("op", op, "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | sendrecv")
      ->required();
  cluster.add_to(app);
  app.add_option("--gpus", gpus, "Ranks, 2 or more, spread evenly over the nodes (default: every GPU)");
  app.add_option("-b,--minbytes", min_bytes, "Smallest size, e.g. 8, 64K, 1M (nccl-tests -b)");
  app.add_option("-e,--maxbytes", max_bytes, "Largest size (nccl-tests -e)");
  app.add_option("-f,--stepfactor", factor, "Multiply the size by this factor each step (nccl-tests -f)");
  app.add_option("-i,--stepbytes", step, "Add this many bytes each step (nccl-tests -i)");
  app.add_option("-d,--datatype", dtype, "float, half, bfloat16, double, int8, uint8, int32, uint32, int64, uint64");
  app.add_option("-o,--op", redop, "Reduction: sum, prod, max, min, avg");
  app.add_option("-r,--root", root, "Root rank of broadcast and reduce");
  app.add_option("--algo", algo, "Force an algorithm, as NCCL_ALGO: " + comm::algo_name_list(", or ", true));
  app.add_option("--proto", proto, "Force a protocol, as NCCL_PROTO: LL, LL128, Simple");
  app.add_option("-g,--ngpus", gpus_per_thread,
                 "GPUs each process drives (nccl-tests -g): their kernel launches serialise");
  app.add_option("-G,--cuda_graph", graph_iters,
                 "Launch through CUDA graphs (nccl-tests -G N): no per-call launch cost");
  app.add_option("--engine", engine, "flow | analytic | auto (flow up to 256 ranks)");
  app.add_option("--env", env,
                 std::string("NCCL environment of the run, NAME=VALUE, repeatable: ") + comm::kNcclVariableNames);
  app.add_option("--format", format, "table | json | csv");
}

std::string CollectiveOptions::run() const {
  const auto parsed_op = comm::parse_op(op);
  if (!parsed_op) {
    const auto names = comm::op_names();
    const std::string hint = suggest(op, names);
    throw InputError({}, "OP",
                     "unknown collective '" + op + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                     join(names));
  }
  const auto type = comm::parse_dtype(dtype);
  if (!type) throw InputError({}, "-d", "unknown data type '" + dtype + "'", join(comm::dtype_names()));
  const auto ops = comm::redop_names();
  if (std::find(ops.begin(), ops.end(), redop) == ops.end()) {
    throw InputError({}, "-o", "unknown reduction '" + redop + "'", join(ops));
  }
  if (format != "table" && format != "json" && format != "csv") {
    throw InputError({}, "--format", "got '" + format + "'", "table, json, csv");
  }
  comm::NcclConfig nccl;
  std::vector<std::string> ignored;
  for (const auto& e : env) comm::apply_nccl_assignment(nccl, e, &ignored);
  comm::CollectiveRequest req;
  req.op = *parsed_op;
  req.dtype = type->name;
  req.redop = redop;
  // NCCL_ALGO / NCCL_PROTO in --env force the choice as --algo / --proto do.
  std::string forced_algo = algo;
  std::string forced_proto = proto;
  if (forced_algo.empty() && nccl.algo) forced_algo = *nccl.algo;
  if (forced_proto.empty() && nccl.proto) forced_proto = *nccl.proto;
  // One name forces it; a list ("Ring,Tree", "^NVLS") leaves NCCL's tuner to choose among those.
  if (!forced_algo.empty()) {
    const auto list = comm::parse_algo_list(forced_algo);
    if (!list) {
      throw InputError({}, algo.empty() ? "--env NCCL_ALGO" : "--algo", "unknown algorithm '" + forced_algo + "'",
                       comm::algo_name_list() + ", a list of them (Ring,Tree) or '^' and a list to leave out");
    }
    if (list->size() == 1 && forced_algo.front() != '^')
      req.algo = list->front();
    else
      req.algos = *list;
  }
  if (!forced_proto.empty()) {
    const auto list = comm::parse_proto_list(forced_proto);
    if (!list)
      throw InputError({}, proto.empty() ? "--env NCCL_PROTO" : "--proto", "unknown protocol '" + forced_proto + "'",
                       "LL, LL128, Simple, a list of them or '^' and a list to leave out");
    if (list->size() == 1 && forced_proto.front() != '^')
      req.proto = list->front();
    else
      req.protos = *list;
  }
  if (engine == "flow")
    req.engine = comm::Engine::flow;
  else if (engine == "analytic")
    req.engine = comm::Engine::analytic;
  else if (engine != "auto")
    throw InputError({}, "--engine", "got '" + engine + "'", "flow, analytic, auto");

  req.cuda_graph = parse_whole("-G", graph_iters, 0, 1000000) > 0;
  const double lo = parse_size("-b", min_bytes);
  const double hi = parse_size("-e", max_bytes);
  if (lo > hi)
    throw InputError({}, "-b", fmt::format("minimum {} is above maximum {}", min_bytes, max_bytes), "-b <= -e");
  if (!factor.empty() && !step.empty()) throw InputError({}, "-f", "give -f or -i, not both", "-f FACTOR or -i BYTES");
  const long f = factor.empty() ? 2 : parse_whole("-f", factor, 2, 1024);
  const double inc = step.empty() ? 0 : parse_size("-i", step);

  const hw::Catalog catalog = cluster.load_catalog();
  const topo::Topology topology(cluster.load_spec(catalog), catalog);
  const comm::NcclParams params = cluster.nccl_params();
  // 0 to the communicator: every GPU, which is what leaving --gpus out means.
  const long ranks = gpus.empty() ? 0 : parse_whole("--gpus", gpus, 1, topo::kMaxGpus);
  const comm::Communicator c(topology, ranks, nccl, &params);
  if (c.ranks() < 2) {
    throw InputError({}, "--gpus", "one rank: a collective over a single GPU moves nothing between GPUs",
                     "--gpus 2 or more (or leave --gpus out for every GPU)");
  }
  if ((type->name == "f8e4m3" || type->name == "f8e5m2") && c.gpu_generation() < comm::GpuGeneration::hopper) {
    throw InputError({}, "-d",
                     fmt::format("NCCL reduces fp8 ({}) only on sm90 (Hopper) and newer; {} is older", type->name,
                                 topology.gpu_spec().name),
                     "float, half, bfloat16, or a Hopper or newer GPU");
  }
  const long root_rank = parse_whole("-r", root, 0, c.ranks() - 1);
  const bool rooted = req.op == comm::Op::broadcast || req.op == comm::Op::reduce;
  req.gpus_per_process = static_cast<int>(parse_whole("-g", gpus_per_thread, 1, c.ranks_per_node()));
  req.root = root_rank;

  std::vector<report::CollectiveRow> rows;
  // The error band's class: where this communicator's data runs (validate/error_classes.hpp).
  const band::CollectivePath path = validate::collective_path(topology, c.nodes());
  const double unit = type->bytes * (comm::splits_by_rank(req.op) ? static_cast<double>(c.ranks()) : 1.0);
  constexpr int kMaxRows = 4096;
  for (double s = lo; s <= hi; s = inc > 0 ? s + inc : s * static_cast<double>(f)) {
    if (static_cast<int>(rows.size()) >= kMaxRows) {
      throw InputError({}, "-i", fmt::format("the size sweep has more than {} steps", kMaxRows), "a larger -i or -f");
    }
    const double size = std::floor(s / unit) * unit;
    if (size <= 0) continue;
    req.size = size;
    report::CollectiveRow row;
    row.size_bytes = size;
    row.count = static_cast<long>(size / type->bytes);
    row.type = type->name;
    // nccl-tests prints the -o operation for the reductions and for sendrecv (whose test loops
    // over the ops like a reduction does); the others print "none".
    row.redop = comm::is_reduction(req.op) || req.op == comm::Op::sendrecv ? redop : "none";
    row.root = rooted ? static_cast<int>(root_rank) : -1;
    row.result = comm::predict(c, req);
    row.band = band::BandTable::builtin().lookup("collectives", band::collective_classes(size, path));
    rows.push_back(row);
  }
  if (rows.empty()) {
    throw InputError({}, "-e", fmt::format("every size is below one {} element per rank ({} bytes)", type->name, unit),
                     fmt::format("-e of at least {}", unit));
  }
  report::CollectiveHeader h;
  h.op = comm::to_string(req.op);
  h.cluster = topology.spec().name;
  h.communicator = c.describe();
  h.engine = comm::to_string(rows.front().result.engine);
  for (const auto& v : nccl.describe()) h.notes.push_back("env: " + v);
  if (!cluster.calibration.empty()) {
    h.notes.push_back("calibration: " + cluster.calibration);
    h.notes.push_back("time band: that of the built-in model; the calibration overlay is not in it");
  }
  for (const auto& v : ignored) h.notes.push_back("env: " + v + " is not modelled (it does not change the prediction)");
  h.notes.insert(h.notes.end(), topology.notes().begin(), topology.notes().end());
  h.notes.insert(h.notes.end(), c.notes().begin(), c.notes().end());
  h.transports = c.transport_summary();
  h.comm = report::summarize(c);
  if (format == "json") return report::collective_json(h, rows);
  if (format == "csv") return report::collective_csv(h, rows);
  return report::collective_table(h, rows);
}

}  // namespace gf::cli
