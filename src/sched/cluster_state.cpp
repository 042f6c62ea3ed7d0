#include "sched/cluster_state.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "topo/topology.hpp"

namespace gf::sched {

namespace {
std::atomic<std::uint64_t> stamps{0};
}

int mig_milli(const std::string& profile) {
  // "3g.40gb" -> 3 compute slices of 7. A GPU has at most 7, so a longer count is no profile
  // (0), and stopping there keeps a trace's digits from overflowing (found by fuzz_job_trace).
  int slices = 0;
  for (char c : profile) {
    if (c < '0' || c > '9') break;
    slices = slices * 10 + (c - '0');
    if (slices > 7) return 0;
  }
  return static_cast<int>((slices * 1000 + 3) / 7);
}

double Job::gpu_demand() const {
  const double one = pod.gpus > 0          ? pod.gpus
                     : pod.share_milli > 0 ? pod.share_milli / 1000.0
                     : !pod.mig.empty()    ? mig_milli(pod.mig) / 1000.0
                                           : 0.0;
  return one * pods;
}

int Node::whole_free() const {
  int n = 0;
  for (const auto& g : gpus)
    if (g.free_milli == 1000 && !g.mig) ++n;
  return n;
}

long Node::free_milli_total() const {
  long n = 0;
  for (const auto& g : gpus)
    if (!g.mig) n += g.free_milli;
  return n;
}

ClusterState::ClusterState(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
  node_version_.resize(nodes_.size());
  for (auto& v : node_version_) v = ++stamps;
  long max_leaf = -1;
  for (auto& n : nodes_) {
    n.cpu_free = n.cpu_milli;
    n.memory_free = n.memory_mib;
    gpus_ += static_cast<long>(n.gpus.size());
    max_leaf = std::max(max_leaf, n.leaf);
  }
  leaves_ = max_leaf + 1;
}

void ClusterState::touch(int node) {
  ++version_;
  node_version_[static_cast<std::size_t>(node)] = ++stamps;
}

bool ClusterState::host_fits(int node, const PodRequest& p) const {
  const Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.cpu_free < p.cpu_milli || n.memory_free < p.memory_mib) return false;
  if (p.wants_gpu() && !p.gpu_models.empty() &&
      std::find(p.gpu_models.begin(), p.gpu_models.end(), n.model) == p.gpu_models.end())
    return false;
  return true;
}

bool ClusterState::could_ever_fit(int node, const PodRequest& p) const {
  const Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.cpu_milli < p.cpu_milli || n.memory_mib < p.memory_mib) return false;
  if (p.wants_gpu() && !p.gpu_models.empty() &&
      std::find(p.gpu_models.begin(), p.gpu_models.end(), n.model) == p.gpu_models.end())
    return false;
  if (p.gpus > static_cast<int>(n.gpus.size())) return false;
  if (p.share_milli > 0 && n.gpus.empty()) return false;
  if (!p.mig.empty() && (!n.mig_table || !n.mig_table->find(p.mig) || n.gpus.empty())) return false;
  return true;
}

namespace {

// The `k` free GPUs closest together: inside one PCIe switch (same nearest NIC) when one has
// room, else inside one socket, else over the sockets with the most free; the tightest group
// that holds them, so larger groups stay whole for larger jobs.
std::vector<int> local_set(const Node& n, int k) {
  std::map<std::pair<int, int>, std::vector<int>> by_switch;
  std::map<int, std::vector<int>> by_socket;
  for (int g = 0; g < static_cast<int>(n.gpus.size()); ++g) {
    const auto& s = n.gpus[static_cast<std::size_t>(g)];
    if (s.free_milli != 1000 || s.mig) continue;
    by_switch[{s.socket, s.nic}].push_back(g);
    by_socket[s.socket].push_back(g);
  }
  const std::vector<int>* best = nullptr;
  for (const auto& [key, gs] : by_switch)
    if (static_cast<int>(gs.size()) >= k && (!best || gs.size() < best->size())) best = &gs;
  if (!best)
    for (const auto& [key, gs] : by_socket)
      if (static_cast<int>(gs.size()) >= k && (!best || gs.size() < best->size())) best = &gs;
  std::vector<int> out;
  if (best) {
    // Within the socket, whole switches first.
    std::vector<std::vector<int>> groups;
    for (const auto& [key, gs] : by_switch)
      if (std::find(best->begin(), best->end(), gs.front()) != best->end()) groups.push_back(gs);
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& gs : groups)
      for (int g : gs)
        if (static_cast<int>(out.size()) < k) out.push_back(g);
  } else {
    std::vector<std::vector<int>> sockets;
    for (const auto& [key, gs] : by_socket) sockets.push_back(gs);
    std::stable_sort(sockets.begin(), sockets.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& gs : sockets)
      for (int g : gs)
        if (static_cast<int>(out.size()) < k) out.push_back(g);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void ClusterState::options(int node, const PodRequest& p, bool local, std::vector<PodPlacement>& out) const {
  if (!host_fits(node, p)) return;
  const Node& n = nodes_[static_cast<std::size_t>(node)];
  if (p.gpus > 0) {
    if (n.whole_free() < p.gpus) return;
    PodPlacement pl;
    pl.node = node;
    pl.milli = 1000;
    if (local) {
      pl.gpus = local_set(n, p.gpus);
    } else {
      for (int g = 0; g < static_cast<int>(n.gpus.size()) && static_cast<int>(pl.gpus.size()) < p.gpus; ++g)
        if (n.gpus[static_cast<std::size_t>(g)].free_milli == 1000 && !n.gpus[static_cast<std::size_t>(g)].mig)
          pl.gpus.push_back(g);
    }
    out.push_back(std::move(pl));
    return;
  }
  if (p.share_milli > 0) {
    // One option per distinct amount left (GPUs with the same amount left are alike to every
    // policy here), the lowest-numbered GPU of each.
    int seen[1001] = {};
    for (int g = 0; g < static_cast<int>(n.gpus.size()); ++g) {
      const auto& s = n.gpus[static_cast<std::size_t>(g)];
      if (s.mig || s.free_milli < p.share_milli || seen[s.free_milli]) continue;
      seen[s.free_milli] = 1;
      out.push_back({node, {g}, p.share_milli, -1, -1});
    }
    return;
  }
  if (!p.mig.empty()) {
    if (!n.mig_table) return;
    const auto* prof = n.mig_table->find(p.mig);
    if (!prof) return;
    const int profile = static_cast<int>(prof - n.mig_table->profiles.data());
    bool fresh_offered = false;
    for (int g = 0; g < static_cast<int>(n.gpus.size()); ++g) {
      const auto& s = n.gpus[static_cast<std::size_t>(g)];
      if (s.mig) {
        if (const auto start = s.mig->fit(profile)) out.push_back({node, {g}, 0, profile, *start});
      } else if (s.free_milli == 1000 && !fresh_offered) {
        // An idle GPU can be switched to MIG mode (it has nothing running): one such option is
        // enough, they are alike.
        fresh_offered = true;
        out.push_back({node, {g}, 0, profile, prof->starts.back()});
      }
    }
    return;
  }
  out.push_back({node, {}, 0, -1, -1});  // CPU only
}

void ClusterState::allocate(const PodRequest& p, const PodPlacement& w) {
  Node& n = nodes_[static_cast<std::size_t>(w.node)];
  n.cpu_free -= p.cpu_milli;
  n.memory_free -= p.memory_mib;
  for (int g : w.gpus) {
    auto& s = n.gpus[static_cast<std::size_t>(g)];
    const bool was_idle = s.free_milli == 1000 && !s.mig;
    if (w.mig_profile >= 0) {
      if (!s.mig) s.mig.emplace(*n.mig_table);
      s.mig->add(w.mig_profile, w.mig_start);
      allocated_milli_ += mig_milli(n.mig_table->profiles[static_cast<std::size_t>(w.mig_profile)].name);
    } else {
      if (s.free_milli < w.milli) throw std::logic_error("ClusterState::allocate: GPU over-committed");
      s.free_milli -= w.milli;
      allocated_milli_ += w.milli;
    }
    if (was_idle) ++in_use_;
  }
  touch(w.node);
}

void ClusterState::release(const PodRequest& p, const PodPlacement& w) {
  Node& n = nodes_[static_cast<std::size_t>(w.node)];
  n.cpu_free += p.cpu_milli;
  n.memory_free += p.memory_mib;
  for (int g : w.gpus) {
    auto& s = n.gpus[static_cast<std::size_t>(g)];
    if (w.mig_profile >= 0) {
      s.mig->remove(w.mig_profile, w.mig_start);
      allocated_milli_ -= mig_milli(n.mig_table->profiles[static_cast<std::size_t>(w.mig_profile)].name);
      if (s.mig->empty()) s.mig.reset();  // idle: it leaves MIG mode and can be re-cut
    } else {
      s.free_milli += w.milli;
      allocated_milli_ -= w.milli;
    }
    if (s.free_milli == 1000 && !s.mig) --in_use_;
  }
  touch(w.node);
}

std::vector<Node> nodes_from_topology(const topo::Topology& t, long cpu_milli, long memory_mib) {
  const auto& tmpl = t.node();
  Node proto;
  proto.model = t.gpu_spec().name;
  proto.cpu_milli = cpu_milli > 0 ? cpu_milli : 1000L * t.cpu_spec().cores * tmpl.sockets();
  proto.memory_mib =
      memory_mib > 0 ? memory_mib : static_cast<long>(t.spec().node.host_memory.value() / (1024.0 * 1024.0));
  proto.mig_table = mig_table(proto.model);
  proto.nvswitch = tmpl.has_nvswitch();
  for (int g = 0; g < tmpl.gpus(); ++g) {
    GpuSlot s;
    s.socket = tmpl.socket_of(tmpl.gpu(g));
    s.nic = tmpl.nics() > 0 ? tmpl.nic_of_gpu(g) : 0;
    proto.gpus.push_back(s);
  }
  std::vector<Node> out;
  out.reserve(static_cast<std::size_t>(t.nodes()));
  for (long i = 0; i < t.nodes(); ++i) {
    Node n = proto;
    n.name = fmt::format("node-{:04d}", i);
    n.first_gpu = i * tmpl.gpus();
    n.leaf = t.fabric() && tmpl.nics() > 0 ? t.fabric()->leaf_of(i, 0) : 0;
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace gf::sched
