#include "comm/ecmp_flows.hpp"

#include <algorithm>
#include <utility>

#include "core/mix.hpp"

namespace gf::comm {

bool ecmp_hashed(const Communicator& c) {
  const auto* f = c.topology().fabric();
  // A rail-optimized fabric is left spread: NCCL keeps a ring's traffic between nodes on one
  // rail (src/graph/search.cc: NCCL_CROSS_NIC defaults to 2, and the search tries crossNic 0,
  // "NET n -> GPU a -> .. -> GPU x -> NET n", first), so it never reaches a spine to collide
  // there. gpufabric's rings still pair each GPU's own NICs across nodes, which crosses rails;
  // hashing those flows would charge collisions that NCCL's rings do not meet.
  return f != nullptr && f->shape().tiers >= 2 && f->shape().kind == topo::FabricKind::fat_tree && c.nodes() > 1 &&
         c.topology().network().load_balancing == hw::LoadBalancing::ecmp;
}

int flows_per_connection(const Communicator& c) {
  if (c.env().ib_disable) return std::max(1, c.env().socket_nthreads) * std::max(1, c.env().nsocks_perthread);
  return std::max(1, c.env().ib_qps_per_connection);
}

EcmpPlacer::EcmpPlacer(const Communicator& c, FlowSink inner)
    : c_(c), inner_(std::move(inner)), qps_(flows_per_connection(c)) {}

void EcmpPlacer::operator()(std::span<const topo::LinkId> path, double bytes) {
  const auto& fabric = *c_.topology().fabric();
  std::uint64_t h = mix64(c_.ecmp_salt());
  for (const auto l : path) h = mix64(h ^ l);
  const std::uint64_t channel = seen_[std::vector<topo::LinkId>(path.begin(), path.end())]++;
  h = mix64(h ^ channel);
  for (int q = 0; q < qps_; ++q) {
    if (!fabric.hashed_path(path, mix64(h + static_cast<std::uint64_t>(q)), hashed_)) {
      inner_(path, bytes);  // inside one leaf: nothing to hash, and the queue pairs share the path
      return;
    }
    inner_(hashed_, bytes / qps_);
  }
}

}  // namespace gf::comm
