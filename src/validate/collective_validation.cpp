#include "validate/collective_validation.hpp"

#include <map>

#include "comm/algorithm.hpp"
#include "comm/model.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "topo/cluster_loader.hpp"
#include "topo/topology.hpp"
#include "validate/error_classes.hpp"
#include "validate/machine.hpp"

namespace gf::validate {

namespace {

constexpr double kSmall = 65536.0;
constexpr double kLarge = 67108864.0;

}  // namespace

std::vector<CollectiveRow> parse_collective_rows(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields top(root, file, "", {"set", "rows"});
  const bool off_path = top.has("set") && top.choice("set", {"repository", "off-path"}) == "off-path";
  std::vector<CollectiveRow> rows;
  std::size_t i = 0;
  for (const auto& item : as_list(top.node("rows"), file, "rows")) {
    const Fields f(item, file, "rows[" + std::to_string(i++) + "]",
                   {"id",
                    "preset",
                    "cluster",
                    "nodes",
                    "gpus",
                    "network",
                    "nic",
                    "nics_per_node",
                    "local_gpus",
                    "p2p",
                    "gpudirect",
                    "op",
                    "size_bytes",
                    "dtype",
                    "measured_busbw_GBps",
                    "measured_time_us",
                    "algo",
                    "proto",
                    "cuda_graph",
                    "gpus_per_process",
                    "nccl_version",
                    "nccl_env",
                    "transport",
                    "network_actual",
                    "stand_in",
                    "machine",
                    "calibration",
                    "excluded",
                    "known_miss",
                    "source",
                    "note"});
    CollectiveRow r;
    r.origin = RowOrigin::of(item, file, "rows[" + std::to_string(i - 1) + "]");
    r.id = f.text("id");
    if (f.has("preset") == f.has("cluster")) f.fail("preset", "give exactly one of preset and cluster");
    r.preset = f.text_or("preset", "");
    r.cluster = f.text_or("cluster", "");
    r.nodes = f.integer_or("nodes", 1, 100000, 1);
    r.gpus = f.integer("gpus", 1, 100000);
    r.network = f.text_or("network", "");
    r.nic = f.text_or("nic", "");
    if (f.has("nics_per_node")) r.nics_per_node = static_cast<int>(f.integer("nics_per_node", 0, 64));
    if (f.has("local_gpus")) {
      r.local_gpus_where = f.where("local_gpus");
      for (const auto& item : as_list(f.node("local_gpus"), file, f.field("local_gpus"))) {
        int g = -1;
        try {
          g = item.as<int>();
        } catch (const YAML::Exception&) {
        }
        if (g < 0 || g > 71) f.fail("local_gpus", "'" + item.Scalar() + "' is not a GPU index", "indices 0-71");
        r.local_gpus.push_back(g);
      }
    }
    if (f.has("p2p")) r.p2p = f.flag("p2p");
    if (f.has("gpudirect")) r.gpudirect = f.flag("gpudirect");
    r.op = f.text("op");
    if (!comm::parse_op(r.op)) f.fail("op", "unknown collective '" + r.op + "'", join(comm::op_names()));
    r.size_bytes = f.physical("size_bytes", 1, physical::size);
    r.dtype = f.text_or("dtype", "float");
    // Ranges checked in SI units: a positive 1e-300 would give an infinite error.
    if (f.has("measured_busbw_GBps")) {
      r.busbw_GBps = f.physical("measured_busbw_GBps", 1e9, physical::bandwidth) / 1e9;
    }
    if (f.has("measured_time_us")) r.time_us = f.physical("measured_time_us", 1e-6, physical::latency) / 1e-6;
    if (!r.busbw_GBps && !r.time_us) f.fail("measured_busbw_GBps", "give measured_busbw_GBps or measured_time_us");
    r.algo = f.text_or("algo", "");
    if (!r.algo.empty() && !comm::parse_algo(r.algo))
      f.fail("algo", "unknown algorithm '" + r.algo + "'", comm::algo_name_list(" or "));
    r.proto = f.text_or("proto", "");
    if (!r.proto.empty() && !comm::parse_proto(r.proto))
      f.fail("proto", "unknown protocol '" + r.proto + "'", "LL, LL128 or Simple");
    r.cuda_graph = f.flag_or("cuda_graph", false);
    r.gpus_per_process = static_cast<int>(f.integer_or("gpus_per_process", 1, 72, 1));
    if (f.has("nccl_env")) {
      const YAML::Node env = f.node("nccl_env");
      if (!env.IsMap()) f.fail("nccl_env", "not a mapping", "a map of NCCL variables, e.g. {NCCL_P2P_DISABLE: \"1\"}");
      for (const auto& kv : env) {
        if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
          f.fail("nccl_env", "every key and value must be a plain string", "{NCCL_NAME: \"value\"}");
        }
        comm::apply_nccl_variable(r.nccl_env, kv.first.Scalar(), kv.second.Scalar(), location_of(kv.first, file),
                                  f.field("nccl_env") + "." + kv.first.Scalar(), &r.nccl_env_ignored);
      }
      // NCCL_ALGO / NCCL_PROTO in the environment force the choice as algo: / proto: do.
      if (r.algo.empty() && r.nccl_env.algo && comm::parse_algo(*r.nccl_env.algo)) r.algo = *r.nccl_env.algo;
      if (r.proto.empty() && r.nccl_env.proto && comm::parse_proto(*r.nccl_env.proto)) r.proto = *r.nccl_env.proto;
    }
    r.transport = f.text_or("transport", "");
    r.network_actual = f.text_or("network_actual", "");
    r.stand_in = f.text_or("stand_in", "");
    if (r.stand_in.empty() && !r.network_actual.empty()) r.stand_in = "network: " + r.network_actual;
    r.off_path = off_path;
    r.machine = f.text_or("machine", "");
    r.calibration = f.flag_or("calibration", false);
    r.excluded = f.text_or("excluded", "");
    r.known_miss = f.text_or("known_miss", "");
    r.source = f.text("source");
    r.note = f.text_or("note", "");
    rows.push_back(r);
  }
  return rows;
}

std::vector<CollectiveRow> builtin_collective_rows() {
  std::vector<CollectiveRow> rows;
  for (const auto& f : data::files_under("data/validation/collectives", ".yaml")) {
    auto more = parse_collective_rows(std::string(f.text), "builtin:" + std::string(f.path));
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

namespace {

CollectiveCheck check_row(const CollectiveRow& row, const hw::Catalog& catalog) {
  auto spec = row_machine(row.origin, row.preset, row.cluster, catalog);
  topo::ClusterOverrides o;
  o.nodes = row.nodes;
  if (!row.network.empty()) o.network = row.network;
  if (!row.nic.empty()) o.nic = row.nic;
  if (row.nics_per_node) o.nics_per_node = *row.nics_per_node;
  if (row.p2p) o.p2p = *row.p2p;
  if (row.gpudirect) o.gpudirect = *row.gpudirect;
  if (row.nodes > 1 && spec.network.fabric == topo::FabricKind::single) {
    // Multi-node measurements ran on real fabrics; a fat-tree holds any of these sizes.
    o.fabric = topo::FabricKind::fat_tree;
  }
  // The overrides come from the row's keys; at_row points errors at them.
  topo::apply_overrides(spec, o, catalog);
  const topo::Topology t(spec, catalog);
  std::vector<long> gpu_list;
  if (!row.local_gpus.empty()) {
    // The GPUs each node's run used (CUDA_VISIBLE_DEVICES), on every node.
    for (long n = 0; n < row.nodes; ++n) {
      for (const int g : row.local_gpus) {
        if (g >= t.gpus_per_node()) {
          throw row.origin.error(
              "local_gpus", "GPU " + std::to_string(g) + " is not in a node of " + std::to_string(t.gpus_per_node()),
              "indices below " + std::to_string(t.gpus_per_node()));
        }
        gpu_list.push_back(n * t.gpus_per_node() + g);
      }
    }
  }
  if (!gpu_list.empty() && static_cast<long>(gpu_list.size()) != row.gpus) {
    throw row.origin.error("local_gpus",
                           std::to_string(row.local_gpus.size()) + " GPUs per node on " + std::to_string(row.nodes) +
                               " nodes are not the row's " + std::to_string(row.gpus) + " ranks",
                           "gpus = nodes x the local_gpus listed");
  }
  const comm::Communicator c =
      gpu_list.empty() ? comm::Communicator(t, row.gpus, row.nccl_env) : comm::Communicator(t, gpu_list, row.nccl_env);
  comm::CollectiveRequest req;
  req.op = *comm::parse_op(row.op);
  req.size = row.size_bytes;
  if (!row.algo.empty()) req.algo = comm::parse_algo(row.algo);
  if (!row.proto.empty()) req.proto = comm::parse_proto(row.proto);
  req.cuda_graph = row.cuda_graph;
  req.gpus_per_process = row.gpus_per_process;
  const auto res = comm::predict(c, req);
  CollectiveCheck chk;
  chk.row = row;
  chk.band = row.size_bytes <= kSmall ? "<=64KiB" : row.size_bytes >= kLarge ? ">=64MiB" : "64KiB-64MiB";
  chk.network = t.network().name;
  chk.nics_per_node = t.node().nics();
  chk.path = collective_path(t, row.nodes);
  chk.algorithm = comm::to_string(res.algo);
  chk.protocol = comm::to_string(res.proto);
  // Large messages are judged by bus bandwidth, small ones by time (what each is limited by);
  // each row uses what its source printed when only one is given.
  const bool use_time = row.time_us && (!row.busbw_GBps || row.size_bytes <= kSmall);
  if (use_time) {
    chk.metric = "time_us";
    chk.measured = *row.time_us;
    chk.predicted = res.time.value() * 1e6;
  } else {
    chk.metric = "busbw_GBps";
    chk.measured = *row.busbw_GBps;
    chk.predicted = res.busbw_GBps;
  }
  chk.error = (chk.predicted - chk.measured) / chk.measured;
  return chk;
}

}  // namespace

std::vector<CollectiveCheck> check_collectives(const std::vector<CollectiveRow>& rows, const hw::Catalog& catalog) {
  std::vector<CollectiveCheck> out;
  for (const auto& row : rows) {
    at_row(row.origin, [&] { out.push_back(check_row(row, catalog)); });
  }
  return out;
}

}  // namespace gf::validate
