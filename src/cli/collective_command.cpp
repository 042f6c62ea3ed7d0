#include "cli/collective_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "comm/algorithm.hpp"
#include "comm/collective_sweep.hpp"
#include "comm/nccl_config.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "report/collective_report.hpp"
#include "topo/topology.hpp"

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

namespace {

// The CLI's flag for each field of the library's request, so messages name what the user typed.
std::string flag_of(const std::string& field) {
  static const std::vector<std::pair<std::string, std::string>> flags = {{comm::sweep_field::op, "OP"},
                                                                         {comm::sweep_field::dtype, "-d"},
                                                                         {comm::sweep_field::redop, "-o"},
                                                                         {comm::sweep_field::sizes, "-e"},
                                                                         {comm::sweep_field::ranks, "--gpus"},
                                                                         {comm::sweep_field::root, "-r"},
                                                                         {comm::sweep_field::gpus_per_process, "-g"},
                                                                         {comm::sweep_field::engine, "--engine"},
                                                                         {comm::sweep_field::algo, "--algo"},
                                                                         {comm::sweep_field::proto, "--proto"},
                                                                         {comm::sweep_field::env, "--env"},
                                                                         {"env NCCL_ALGO", "--env NCCL_ALGO"},
                                                                         {"env NCCL_PROTO", "--env NCCL_PROTO"}};
  for (const auto& [name, flag] : flags)
    if (field == name) return flag;
  return field;
}

// nccl-tests' -b/-e/-f/-i as the list of sizes.
std::vector<double> sweep_sizes(const CollectiveOptions& o) {
  const double lo = parse_size("-b", o.min_bytes);
  const double hi = parse_size("-e", o.max_bytes);
  if (lo > hi)
    throw InputError({}, "-b", fmt::format("minimum {} is above maximum {}", o.min_bytes, o.max_bytes), "-b <= -e");
  if (!o.factor.empty() && !o.step.empty())
    throw InputError({}, "-f", "give -f or -i, not both", "-f FACTOR or -i BYTES");
  const long f = o.factor.empty() ? 2 : parse_whole("-f", o.factor, 2, 1024);
  const double inc = o.step.empty() ? 0 : parse_size("-i", o.step);
  try {
    return comm::size_steps(lo, hi, f, inc);
  } catch (const InputError& e) {
    throw InputError(e.where(), "-i", e.problem(), "a larger -i or -f");
  }
}

}  // namespace

comm::CollectiveSweepRequest CollectiveOptions::request() const {
  comm::CollectiveSweepRequest r;
  r.op = op;
  r.dtype = dtype;
  r.redop = redop;
  r.sizes = sweep_sizes(*this);
  r.cuda_graph = parse_whole("-G", graph_iters, 0, 1000000) > 0;
  // 0 to the communicator: every GPU, which is what leaving --gpus out means.
  r.ranks = gpus.empty() ? 0 : parse_whole("--gpus", gpus, 1, topo::kMaxGpus);
  r.root = parse_whole("-r", root, 0, topo::kMaxGpus);
  r.gpus_per_process = static_cast<int>(parse_whole("-g", gpus_per_thread, 1, topo::kMaxGpus));
  r.engine = engine;
  r.algo = algo;
  r.proto = proto;
  r.env = env;
  return r;
}

std::string CollectiveOptions::run() const {
  if (format != "table" && format != "json" && format != "csv") {
    throw InputError({}, "--format", "got '" + format + "'", "table, json, csv");
  }
  const comm::CollectiveSweepRequest r = request();
  const hw::Catalog catalog = cluster.load_catalog();
  const topo::Topology topology(cluster.load_spec(catalog), catalog);
  comm::CollectiveSweep sweep;
  try {
    sweep = comm::sweep_collective(topology, cluster.nccl_params(), r);
  } catch (const InputError& e) {
    const std::string flag = flag_of(e.field());
    std::string valid = e.valid();
    if (flag == "--gpus" && e.problem().starts_with("one rank"))
      valid = "--gpus 2 or more (or leave --gpus out for every GPU)";
    const std::string at_least = "a size of at least ";
    if (flag == "-e" && valid.starts_with(at_least)) valid = "-e of at least " + valid.substr(at_least.size());
    throw InputError(e.where(), flag, e.problem(), valid);
  }
  report::CollectiveHeader h;
  h.op = sweep.op;
  h.cluster = sweep.cluster;
  h.communicator = sweep.comm.description;
  h.engine = sweep.engine;
  if (!cluster.calibration.empty()) {
    h.notes.push_back("calibration: " + cluster.calibration);
    h.notes.push_back("time band: that of the built-in model; the calibration overlay is not in it");
  }
  h.notes.insert(h.notes.end(), sweep.notes.begin(), sweep.notes.end());
  h.transports = sweep.comm.transports;
  h.comm = sweep.comm;
  if (format == "json") return report::collective_json(h, sweep.rows);
  if (format == "csv") return report::collective_csv(h, sweep.rows);
  return report::collective_table(h, sweep.rows);
}

}  // namespace gf::cli
