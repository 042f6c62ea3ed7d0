#include "comm/nccl_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "comm/collective.hpp"

namespace gf::comm {

namespace {

// NCCL's level names, and the old numeric form (0 LOC .. 5 SYS, ncclGetLevel's levelsOldToNew).
std::optional<PathLevel> parse_level(const std::string& v) {
  if (const auto named = parse_name_nocase(kPathLevelNames, v)) return named;
  if (v.size() == 1 && v[0] >= '0' && v[0] <= '5') {
    const PathLevel old[] = {PathLevel::loc, PathLevel::pix, PathLevel::pxb,
                             PathLevel::phb, PathLevel::sys, PathLevel::sys};
    return old[v[0] - '0'];
  }
  return std::nullopt;
}

long parse_int(const std::string& v, long lo, long hi, const SourceLocation& where, const std::string& field,
               const std::string& name) {
  long out = 0;
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size() || out < lo || out > hi) {
    throw InputError(where, field, fmt::format("{}={} is not a whole number from {} to {}", name, v, lo, hi),
                     fmt::format("{}={}..{}", name, lo, hi));
  }
  return out;
}

bool parse_bool(const std::string& v, const SourceLocation& where, const std::string& field, const std::string& name) {
  return parse_int(v, 0, 1, where, field, name) == 1;
}

}  // namespace

const char* to_string(PathLevel l) { return name_of(kPathLevelNames, l); }

PathLevel level_of(topo::PathType t) {
  switch (t) {
    case topo::PathType::self: return PathLevel::loc;
    case topo::PathType::nvlink: return PathLevel::nvl;
    case topo::PathType::pix: return PathLevel::pix;
    case topo::PathType::pxb: return PathLevel::pxb;
    case topo::PathType::phb:
    case topo::PathType::node: return PathLevel::phb;
    case topo::PathType::sys:
    case topo::PathType::net: return PathLevel::sys;
  }
  return PathLevel::sys;
}

const char* const kNcclVariableNames =
    "NCCL_P2P_LEVEL, NCCL_P2P_DISABLE, NCCL_NET_GDR_LEVEL, NCCL_IB_DISABLE, NCCL_SHM_DISABLE, NCCL_PXN_DISABLE, "
    "NCCL_P2P_PXN_LEVEL, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, "
    "NCCL_BUFFSIZE, NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE, NCCL_P2P_NET_CHUNKSIZE, "
    "NCCL_ALLOC_P2P_NET_LL_BUFFERS, NCCL_NET_SHARED_BUFFERS, NCCL_SOCKET_NTHREADS, NCCL_NSOCKS_PERTHREAD, "
    "NCCL_IB_QPS_PER_CONNECTION, NCCL_ALGO, NCCL_PROTO";

bool sets(const NcclConfig& cfg, const std::string& name) {
  return std::find(cfg.names.begin(), cfg.names.end(), name) != cfg.names.end();
}

void apply_nccl_variable(NcclConfig& cfg, const std::string& name, const std::string& value,
                         const SourceLocation& where, const std::string& field, std::vector<std::string>* ignored) {
  auto level = [&]() {
    const auto l = parse_level(value);
    if (!l) {
      throw InputError(where, field, fmt::format("{}={} is not a path level", name, value),
                       join(names(kPathLevelNames)) + " (or 0-5)");
    }
    return *l;
  };
  if (name == "NCCL_P2P_LEVEL") {
    cfg.p2p_level = level();
  } else if (name == "NCCL_P2P_DISABLE") {
    if (parse_bool(value, where, field, name)) cfg.p2p_level = PathLevel::loc;
  } else if (name == "NCCL_NET_GDR_LEVEL") {
    cfg.net_gdr_level = level();
  } else if (name == "NCCL_IB_DISABLE") {
    cfg.ib_disable = parse_bool(value, where, field, name);
  } else if (name == "NCCL_SHM_DISABLE") {
    cfg.shm_disable = parse_bool(value, where, field, name);
  } else if (name == "NCCL_PXN_DISABLE") {
    cfg.pxn_disable = parse_bool(value, where, field, name);
  } else if (name == "NCCL_P2P_PXN_LEVEL") {
    // 0: never through a peer GPU; 1: only where the NIC is not reachable without it; 2 (the
    // default): wherever it is faster. gpufabric models 0 against the rest.
    cfg.pxn_disable = parse_int(value, 0, 2, where, field, name) == 0;
  } else if (name == "NCCL_NVLS_ENABLE") {
    cfg.nvls_disable = !parse_bool(value, where, field, name);
  } else if (name == "NCCL_COLLNET_ENABLE") {
    cfg.collnet_enable = parse_bool(value, where, field, name);
  } else if (name == "NCCL_MIN_NCHANNELS" || name == "NCCL_MIN_NRINGS") {
    cfg.min_channels = static_cast<int>(parse_int(value, 1, 64, where, field, name));
  } else if (name == "NCCL_MAX_NCHANNELS" || name == "NCCL_MAX_NRINGS") {
    cfg.max_channels = static_cast<int>(parse_int(value, 1, 64, where, field, name));
  } else if (name == "NCCL_BUFFSIZE") {
    cfg.buffsize = static_cast<double>(parse_int(value, 65536, 1L << 30, where, field, name));
  } else if (name == "NCCL_NVLS_CHUNKSIZE") {
    cfg.nvls_chunksize = static_cast<double>(parse_int(value, 4096, 1L << 30, where, field, name));
  } else if (name == "NCCL_NVLSTREE_MAX_CHUNKSIZE") {
    cfg.nvls_tree_max_chunksize = static_cast<double>(parse_int(value, 4096, 1L << 30, where, field, name));
  } else if (name == "NCCL_P2P_NET_CHUNKSIZE") {
    cfg.p2p_net_chunksize = static_cast<double>(parse_int(value, 4096, 1L << 30, where, field, name));
  } else if (name == "NCCL_ALLOC_P2P_NET_LL_BUFFERS") {
    cfg.alloc_p2p_net_ll_buffers = parse_bool(value, where, field, name);
  } else if (name == "NCCL_NET_SHARED_BUFFERS") {
    // Unshared network buffers are per connection and include LL's (src/transport/net.cc).
    cfg.net_unshared_buffers = !parse_bool(value, where, field, name);
  } else if (name == "NCCL_SOCKET_NTHREADS") {
    cfg.socket_nthreads = static_cast<int>(parse_int(value, 1, 16, where, field, name));
  } else if (name == "NCCL_NSOCKS_PERTHREAD") {
    cfg.nsocks_perthread = static_cast<int>(parse_int(value, 1, 64, where, field, name));
  } else if (name == "NCCL_IB_QPS_PER_CONNECTION") {
    // NCCL_IB_MAX_QPS (src/transport/net_ib/common.h) bounds the queue pairs of a connection.
    cfg.ib_qps_per_connection = static_cast<int>(parse_int(value, 1, 128, where, field, name));
  } else if (name == "NCCL_ALGO") {
    if (!parse_algo_list(value)) {
      throw InputError(where, field, fmt::format("{}={} names no algorithm gpufabric knows", name, value),
                       "a list of Ring, Tree, NVLS, NVLSTree, CollNetDirect, CollNetChain, PAT, Hierarchical, or '^' "
                       "and a list to leave out");
    }
    cfg.algo = value;
  } else if (name == "NCCL_PROTO") {
    if (!parse_proto_list(value)) {
      throw InputError(where, field, fmt::format("{}={} names no protocol", name, value),
                       "a list of LL, LL128, Simple, or '^' and a list to leave out");
    }
    cfg.proto = value;
  } else if (name.rfind("NCCL_", 0) == 0) {
    if (ignored != nullptr) ignored->push_back(name);
    return;  // not modelled: not one of the variables set
  } else {
    throw InputError(where, field, fmt::format("'{}' is not an NCCL variable", name), kNcclVariableNames);
  }
  if (!sets(cfg, name)) cfg.names.push_back(name);
  if (cfg.min_channels > 0 && cfg.max_channels > 0 && cfg.min_channels > cfg.max_channels) {
    throw InputError(
        where, field,
        fmt::format("NCCL_MIN_NCHANNELS={} is above NCCL_MAX_NCHANNELS={}", cfg.min_channels, cfg.max_channels),
        "NCCL_MIN_NCHANNELS <= NCCL_MAX_NCHANNELS");
  }
}

void apply_nccl_assignment(NcclConfig& cfg, const std::string& assignment, std::vector<std::string>* ignored) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError({}, "--env", "got '" + assignment + "'", "NAME=VALUE, e.g. NCCL_P2P_LEVEL=SYS");
  }
  apply_nccl_variable(cfg, assignment.substr(0, eq), assignment.substr(eq + 1), {}, "--env", ignored);
}

std::vector<std::pair<std::string, std::string>> NcclConfig::variables() const {
  std::vector<std::pair<std::string, std::string>> out;
  auto add = [&out](const char* name, const auto& value) { out.emplace_back(name, fmt::format("{}", value)); };
  if (p2p_level) add("NCCL_P2P_LEVEL", to_string(*p2p_level));
  if (net_gdr_level) add("NCCL_NET_GDR_LEVEL", to_string(*net_gdr_level));
  if (ib_disable) add("NCCL_IB_DISABLE", 1);
  if (shm_disable) add("NCCL_SHM_DISABLE", 1);
  if (pxn_disable) add("NCCL_PXN_DISABLE", 1);
  if (nvls_disable) add("NCCL_NVLS_ENABLE", 0);
  if (collnet_enable) add("NCCL_COLLNET_ENABLE", 1);
  if (min_channels > 0) add("NCCL_MIN_NCHANNELS", min_channels);
  if (max_channels > 0) add("NCCL_MAX_NCHANNELS", max_channels);
  if (buffsize > 0) add("NCCL_BUFFSIZE", static_cast<long>(buffsize));
  if (nvls_chunksize > 0) add("NCCL_NVLS_CHUNKSIZE", static_cast<long>(nvls_chunksize));
  if (nvls_tree_max_chunksize > 0) add("NCCL_NVLSTREE_MAX_CHUNKSIZE", static_cast<long>(nvls_tree_max_chunksize));
  if (p2p_net_chunksize > 0) add("NCCL_P2P_NET_CHUNKSIZE", static_cast<long>(p2p_net_chunksize));
  if (alloc_p2p_net_ll_buffers) add("NCCL_ALLOC_P2P_NET_LL_BUFFERS", 1);
  if (net_unshared_buffers) add("NCCL_NET_SHARED_BUFFERS", 0);
  if (socket_nthreads > 0) add("NCCL_SOCKET_NTHREADS", socket_nthreads);
  if (nsocks_perthread > 0) add("NCCL_NSOCKS_PERTHREAD", nsocks_perthread);
  if (ib_qps_per_connection > 0) add("NCCL_IB_QPS_PER_CONNECTION", ib_qps_per_connection);
  if (algo) add("NCCL_ALGO", *algo);
  if (proto) add("NCCL_PROTO", *proto);
  return out;
}

std::vector<std::string> NcclConfig::describe() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : variables()) out.push_back(name + "=" + value);
  return out;
}

}  // namespace gf::comm
