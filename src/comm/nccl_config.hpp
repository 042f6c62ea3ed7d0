#pragma once
// The NCCL environment a collective runs under (NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL,
// NCCL_IB_DISABLE, NCCL_MIN_NCHANNELS, ...), as an explicit value: the model never reads the
// process environment, so two settings can be compared in one process.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "topo/route.hpp"

namespace gf::comm {

// NCCL's path distances, in its order (src/graph/topo.h): a transport is allowed up to a level.
enum class PathLevel { loc = 0, nvl = 1, pix = 2, pxb = 3, phb = 4, sys = 5 };
inline constexpr EnumNames<PathLevel, 6> kPathLevelNames{{{PathLevel::loc, "LOC"},
                                                          {PathLevel::nvl, "NVL"},
                                                          {PathLevel::pix, "PIX"},
                                                          {PathLevel::pxb, "PXB"},
                                                          {PathLevel::phb, "PHB"},
                                                          {PathLevel::sys, "SYS"}}};
const char* to_string(PathLevel l);
// nvidia-smi's classes to NCCL's: NODE (across host bridges of one socket) is NCCL's PHB.
PathLevel level_of(topo::PathType t);

struct NcclConfig {
  std::optional<PathLevel> p2p_level;      // NCCL_P2P_LEVEL (NCCL_P2P_DISABLE=1 is LOC); unset: NCCL's default
  std::optional<PathLevel> net_gdr_level;  // NCCL_NET_GDR_LEVEL; unset: PXB
  bool ib_disable = false;                 // NCCL_IB_DISABLE=1: sockets (TCP) between nodes
  bool shm_disable = false;                // NCCL_SHM_DISABLE=1
  bool pxn_disable = false;                // NCCL_PXN_DISABLE=1 (or NCCL_P2P_PXN_LEVEL=0)
  bool nvls_disable = false;               // NCCL_NVLS_ENABLE=0
  bool collnet_enable = false;             // NCCL_COLLNET_ENABLE=1: the tuner considers CollNet (SHARP)
  int min_channels = 0;                    // NCCL_MIN_NCHANNELS (0: unset)
  int max_channels = 0;                    // NCCL_MAX_NCHANNELS (0: unset)
  double buffsize = 0;                     // NCCL_BUFFSIZE bytes (0: NCCL's 4 MiB)
  double nvls_chunksize = 0;               // NCCL_NVLS_CHUNKSIZE bytes (0: NCCL's 128 KiB)
  double nvls_tree_max_chunksize = 0;      // NCCL_NVLSTREE_MAX_CHUNKSIZE bytes (0: NCCL's default)
  double p2p_net_chunksize = 0;            // NCCL_P2P_NET_CHUNKSIZE bytes (0: NCCL's 128 KiB)
  bool alloc_p2p_net_ll_buffers = false;   // NCCL_ALLOC_P2P_NET_LL_BUFFERS=1
  bool net_unshared_buffers = false;       // NCCL_NET_SHARED_BUFFERS=0
  int socket_nthreads = -1;                // NCCL_SOCKET_NTHREADS (-1: NCCL's default)
  int nsocks_perthread = -1;               // NCCL_NSOCKS_PERTHREAD
  // NCCL_IB_QPS_PER_CONNECTION (-1: NCCL's default of 1, NCCL_PARAM(IbQpsPerConn, ..., 1) in
  // src/transport/net_ib.cc): queue pairs per connection, each its own flow to an ECMP hash.
  int ib_qps_per_connection = -1;
  std::optional<std::string> algo;   // NCCL_ALGO, as given
  std::optional<std::string> proto;  // NCCL_PROTO, as given
  std::vector<std::string> names;    // the variables set (those the model reads)

  // Point-to-point connections across nodes have LL buffers (NCCL allocates them only on
  // request or for unshared connections, src/transport/net.cc).
  [[nodiscard]] bool p2p_net_ll_buffers() const { return alloc_p2p_net_ll_buffers || net_unshared_buffers; }

  // The variables that were set (those the model reads), as (NAME, VALUE) in a fixed order.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> variables() const;
  // The same as NAME=VALUE, for output headers.
  [[nodiscard]] std::vector<std::string> describe() const;
};

// Applies one NAME=VALUE. Unknown NCCL_* names are ignored with a note in `ignored` (NCCL has
// hundreds; only those that change the model are read); a bad value is an InputError at `where`
// naming `field`.
void apply_nccl_variable(NcclConfig& cfg, const std::string& name, const std::string& value,
                         const SourceLocation& where, const std::string& field, std::vector<std::string>* ignored);

// Whether `name` was set.
[[nodiscard]] bool sets(const NcclConfig& cfg, const std::string& name);

// The variables the model reads, comma-separated, for help texts and error messages.
extern const char* const kNcclVariableNames;

// Parses "NAME=VALUE" (the --env option).
void apply_nccl_assignment(NcclConfig& cfg, const std::string& assignment, std::vector<std::string>* ignored);

}  // namespace gf::comm
