#include "comm/nccl_params.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::comm {

namespace {

const char* const kAlgoKeys[] = {"ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat"};
const Algo kAlgos[] = {Algo::ring,           Algo::tree,          Algo::nvls, Algo::nvls_tree,
                       Algo::collnet_direct, Algo::collnet_chain, Algo::pat};

void parse_table(const Fields& f, const char* key, double (&out)[kAlgoCount][kProtoCount]) {
  const Fields t(f.node(key), f.file(), f.field(key),
                 {"ring", "tree", "nvls", "nvls_tree", "collnet_direct", "collnet_chain", "pat"});
  for (std::size_t i = 0; i < 7; ++i) {
    if (!t.has(kAlgoKeys[i])) continue;
    const Fields p(t.node(kAlgoKeys[i]), f.file(), t.field(kAlgoKeys[i]), {"ll", "ll128", "simple"});
    const int a = static_cast<int>(kAlgos[i]);
    if (p.has("ll")) out[a][0] = p.number("ll");
    if (p.has("ll128")) out[a][1] = p.number("ll128");
    if (p.has("simple")) out[a][2] = p.number("simple");
  }
}

// A map keyed by NVLink generation ("1".."5"), each value read by `read` (which checks it).
template <typename T, typename Read>
std::map<int, T> by_generation(const Fields& parent, const char* key, Read read) {
  const Fields f(parent.node(key), parent.file(), parent.field(key), {"1", "2", "3", "4", "5"});
  std::map<int, T> out;
  for (const auto& kv : parent.node(key)) {
    const std::string g = kv.first.as<std::string>();
    out[std::stoi(g)] = read(f, g.c_str());
  }
  return out;
}

// A [1 node, 2 nodes, more] triple.
void parse_triple(const Fields& f, const char* key, double (&out)[3]) {
  const auto items = as_list(f.node(key), f.file(), f.field(key));
  if (items.size() != 3) f.fail(key, fmt::format("{} values", items.size()), "three: [1 node, 2 nodes, more]");
  for (std::size_t i = 0; i < 3; ++i) {
    if (!items[i].IsScalar()) f.fail(key, "a value is not a number", "three numbers");
    try {
      out[i] = items[i].as<double>();
    } catch (const YAML::Exception&) {
      f.fail(key, "'" + items[i].Scalar() + "' is not a number", "three numbers >= 0");
    }
    if (!std::isfinite(out[i]) || out[i] < 0 || out[i] > 1e4) f.fail(key, "out of range", "0 to 10000 GB/s");
  }
}

// Tables by GPU generation.
void parse_by_arch(const Fields& parent, const char* key, double (&out)[4][3]) {
  const Fields f(parent.node(key), parent.file(), parent.field(key), {"volta", "ampere", "hopper", "blackwell"});
  const char* archs[] = {"volta", "ampere", "hopper", "blackwell"};
  for (int a = 0; a < 4; ++a) parse_triple(f, archs[a], out[a]);
}

void parse_tuner(const Fields& root, NcclParams::Tuner& t) {
  for (auto& row : t.base)
    for (double& v : row) v = -1;
  for (auto& k : t.hop)
    for (auto& row : k)
      for (double& v : row) v = -1;
  const std::string& file = root.file();
  const Fields f(
      root.node("tuner"), file, "tuner",
      {"source", "base_latency_us", "hop_latency_us", "ll_max_busbw_GBps", "per_channel_max_busbw_GBps", "refinements",
       "nvls_efficiency", "tree_correction", "ring_plateau_latency", "net_overhead_us", "p2p_ll_threshold_bytes"});
  (void)f.text("source");
  parse_table(f, "base_latency_us", t.base);
  const Fields hop(f.node("hop_latency_us"), file, f.field("hop_latency_us"), {"nvlink", "pcie", "net"});
  parse_table(hop, "nvlink", t.hop[0]);
  parse_table(hop, "pcie", t.hop[1]);
  parse_table(hop, "net", t.hop[2]);
  parse_by_arch(f, "ll_max_busbw_GBps", t.ll_max_GBps);
  const Fields caps(f.node("per_channel_max_busbw_GBps"), file, f.field("per_channel_max_busbw_GBps"),
                    {"ring_ll128", "tree_ll128", "tree", "nvls_tree"});
  parse_by_arch(caps, "ring_ll128", t.ring_ll128_cap_GBps);
  parse_by_arch(caps, "tree_ll128", t.tree_ll128_cap_GBps);
  parse_by_arch(caps, "tree", t.tree_cap_GBps);
  parse_by_arch(caps, "nvls_tree", t.nvls_tree_cap_GBps);
  const Fields r(
      f.node("refinements"), file, f.field("refinements"),
      {"ring_ll", "ring_ll128", "tree", "tree_ll", "tree_ll128_single_node", "tree_ll128_multi_node", "pat"});
  t.ring_ll = r.fraction("ring_ll");
  t.ring_ll128 = r.fraction("ring_ll128");
  t.tree = r.fraction("tree");
  t.tree_ll = r.fraction("tree_ll");
  t.tree_ll128_single_node = r.fraction("tree_ll128_single_node");
  t.tree_ll128_multi_node = r.fraction("tree_ll128_multi_node");
  t.pat = r.fraction("pat");
  const Fields ne(f.node("nvls_efficiency"), file, f.field("nvls_efficiency"),
                  {"volta", "ampere", "hopper", "blackwell"});
  const char* archs[] = {"volta", "ampere", "hopper", "blackwell"};
  for (int a = 0; a < 4; ++a) {
    t.nvls_efficiency[a] = ne.number(archs[a]);
    if (t.nvls_efficiency[a] < 0 || t.nvls_efficiency[a] > 1) ne.fail(archs[a], "out of range", "0 to 1");
  }
  const Fields tc(f.node("tree_correction"), file, f.field("tree_correction"), {"ll", "ll128", "simple"});
  const char* protos[] = {"ll", "ll128", "simple"};
  for (int p = 0; p < 3; ++p) {
    const auto items = as_list(tc.node(protos[p]), file, tc.field(protos[p]));
    if (items.size() != 24) tc.fail(protos[p], fmt::format("{} values", items.size()), "24 factors, 64 B to 256 MiB");
    for (std::size_t i = 0; i < 24; ++i) {
      double v = 0;
      try {
        v = items[i].as<double>();
      } catch (const YAML::Exception&) {
        tc.fail(protos[p], "a value is not a number", "24 factors in (0, 1]");
      }
      if (!(v > 0 && v <= 1)) tc.fail(protos[p], fmt::format("{} is out of range", v), "24 factors in (0, 1]");
      t.tree_correction[p][i] = v;
    }
  }
  const Fields pl(f.node("ring_plateau_latency"), file, f.field("ring_plateau_latency"),
                  {"before_sm80", "sm80_or_newer"});
  t.plateau_before_sm80 = pl.positive("before_sm80");
  t.plateau_sm80 = pl.positive("sm80_or_newer");
  const Fields no(f.node("net_overhead_us"), file, f.field("net_overhead_us"), {"intel", "amd"});
  t.net_overhead_intel_us = no.number("intel");
  t.net_overhead_amd_us = no.number("amd");
  t.p2p_ll_threshold_bytes = f.positive("p2p_ll_threshold_bytes");
}

}  // namespace

NcclParams parse_nccl_params(const std::string& text, const std::string& file) {
  NcclParams n;
  for (auto& row : n.base)
    for (double& v : row) v = -1;
  for (auto& t : n.hop)
    for (auto& row : t)
      for (double& v : row) v = -1;
  const YAML::Node root = parse_yaml(text, file);
  const Fields f(root, file, "",
                 {"source",
                  "base_latency_us",
                  "hop_latency_us",
                  "protocol_payload",
                  "protocol_factor",
                  "ll_max_busbw_GBps",
                  "nvlink_efficiency",
                  "nvls_efficiency",
                  "launch_overhead_us",
                  "launch_per_gpu_us",
                  "net_reference_latency_us",
                  "nvls_latency_us",
                  "calibration_source",
                  "pipeline",
                  "p2p",
                  "p2p_schedule",
                  "nvswitch_coll_channels",
                  "tuner",
                  "shm",
                  "socket",
                  "ll128_one_gpu_per_node",
                  "collnet_arity_latency_us"});
  n.source = f.text("source");
  parse_table(f, "base_latency_us", n.base);
  const Fields hop(f.node("hop_latency_us"), file, "hop_latency_us", {"nvlink", "pcie", "net"});
  parse_table(hop, "nvlink", n.hop[0]);
  parse_table(hop, "pcie", n.hop[1]);
  parse_table(hop, "net", n.hop[2]);
  const Fields pay(f.node("protocol_payload"), file, "protocol_payload", {"ll", "ll128", "simple"});
  n.payload[0] = pay.fraction("ll");
  n.payload[1] = pay.fraction("ll128");
  n.payload[2] = pay.fraction("simple");
  const Fields pf(f.node("protocol_factor"), file, "protocol_factor",
                  {"ring", "ring_other", "tree", "tree_single_node"});
  const char* tables[] = {"ring", "ring_other", "tree", "tree_single_node"};
  for (int t = 0; t < 4; ++t) {
    const Fields row(pf.node(tables[t]), file, pf.field(tables[t]), {"ll", "ll128", "simple"});
    n.factor[t][0] = row.fraction("ll");
    n.factor[t][1] = row.fraction("ll128");
    n.factor[t][2] = row.fraction("simple");
  }
  const Fields caps(f.node("ll_max_busbw_GBps"), file, "ll_max_busbw_GBps", {"single_node", "two_nodes", "many_nodes"});
  const Fields single(caps.node("single_node"), file, caps.field("single_node"), {"volta", "ampere", "hopper"});
  n.ll_cap_single[0] = single.positive("volta");
  n.ll_cap_single[1] = single.positive("ampere");
  n.ll_cap_single[2] = single.positive("hopper");
  const char* multi[] = {"two_nodes", "many_nodes"};
  for (int m = 0; m < 2; ++m) {
    const Fields row(caps.node(multi[m]), file, caps.field(multi[m]), {"intel", "amd"});
    n.ll_cap_multi[m][0] = row.positive("intel");
    n.ll_cap_multi[m][1] = row.positive("amd");
  }
  const auto fraction = [](const Fields& g, const char* k) { return g.fraction(k); };
  n.nvlink_efficiency = by_generation<double>(f, "nvlink_efficiency", fraction);
  n.nvls_efficiency = by_generation<double>(f, "nvls_efficiency", fraction);
  n.launch_overhead_us = f.number("launch_overhead_us");
  n.launch_per_gpu_us = f.number("launch_per_gpu_us");
  n.net_reference_latency_us = f.positive("net_reference_latency_us");
  const Fields nl(f.node("nvls_latency_us"), file, "nvls_latency_us", {"base", "per_rank"});
  n.nvls_latency_base_us = nl.number("base");
  n.nvls_latency_per_rank_us = nl.number("per_rank");
  n.calibration_source = f.text("calibration_source");
  const Fields pl(f.node("pipeline"), file, "pipeline",
                  {"steps", "simple_buffer_bytes", "nvls_channels", "nvls_chunk_bytes", "nvls_tree_max_chunk_bytes"});
  n.pipeline_steps = static_cast<int>(pl.integer("steps", 1, 64));
  n.simple_buffer_bytes = pl.positive("simple_buffer_bytes");
  n.nvls_channels = static_cast<int>(pl.integer("nvls_channels", 1, 64));
  n.nvls_chunk_bytes = pl.positive("nvls_chunk_bytes");
  n.nvls_tree_max_chunk_bytes = pl.positive("nvls_tree_max_chunk_bytes");
  const Fields p2p(f.node("p2p"), file, "p2p",
                   {"channels", "channels_per_peer", "nvl_chunk_bytes", "net_chunk_bytes", "channel_GBps"});
  n.p2p.channels = static_cast<int>(p2p.integer("channels", 1, 64));
  n.p2p.channels_per_peer = static_cast<int>(p2p.integer("channels_per_peer", 1, 64));
  n.p2p.nvl_chunk_bytes = p2p.positive("nvl_chunk_bytes");
  n.p2p.net_chunk_bytes = p2p.positive("net_chunk_bytes");
  n.p2p_channel_GBps =
      by_generation<double>(p2p, "channel_GBps", [](const Fields& g, const char* k) { return g.positive(k); });
  const Fields ps(f.node("p2p_schedule"), file, "p2p_schedule", {"ops_per_batch", "net_channels_per_peer", "source"});
  n.p2p_schedule.ops_per_batch = static_cast<int>(ps.integer("ops_per_batch", 1, 64));
  n.p2p_schedule.net_channels_per_peer = static_cast<int>(ps.integer("net_channels_per_peer", 1, 64));
  n.nvswitch_coll_channels = by_generation<int>(f, "nvswitch_coll_channels", [](const Fields& g, const char* k) {
    return static_cast<int>(g.integer(k, 1, 64));
  });
  parse_tuner(f, n.tuner);
  n.ll128_one_gpu_per_node = f.fraction("ll128_one_gpu_per_node");
  n.collnet_arity_us = f.number("collnet_arity_latency_us");
  const Fields shm(f.node("shm"), file, "shm", {"channel_GBps", "calibration_rows", "source"});
  n.shm_channel_GBps = shm.positive("channel_GBps");
  const Fields sock(f.node("socket"), file, "socket", {"stream_GBps", "source"});
  n.socket_stream_GBps = sock.positive("stream_GBps");
  return n;
}

const NcclParams& nccl_params() {
  static const NcclParams params = [] {
    if (const auto text = data::find("data/comm/nccl.yaml"))
      return parse_nccl_params(std::string(*text), "builtin:data/comm/nccl.yaml");
    throw InputError({}, "", "data/comm/nccl.yaml is missing from the build");
  }();
  return params;
}

}  // namespace gf::comm
