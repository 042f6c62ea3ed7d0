#include "report/topo_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "report/table.hpp"
#include "topo/summary.hpp"

namespace gf::report {

using topo::Route;
using topo::Topology;

namespace {

std::string gbps(Bandwidth b) { return fixed(in_GBps(b), 2); }
std::string us(Seconds s) { return fixed(in_us(s), 2); }

// The ratio built, as down:up ports per leaf; when the switch's radix cannot split its ports at
// the ratio asked for, both, so that `--oversubscription 8` on 64 ports does not silently read 7:1.
std::string oversubscription_words(const topo::FabricShape& s, double requested) {
  std::string out = fmt::format("{:.3g}:1", s.oversubscription);
  if (s.up_ports > 0 && std::fabs(s.oversubscription - requested) > 1e-9 * requested) {
    out += fmt::format(
        " ({} down : {} up ports per leaf; {:g}:1 requested, the closest split of {} ports that is "
        "not more oversubscribed)",
        s.down_ports, s.up_ports, requested, s.radix);
  }
  return out;
}

std::string fabric_words(const Topology& t) {
  const auto* f = t.fabric();
  if (f == nullptr) return "no network";
  const auto& s = f->shape();
  if (s.tiers <= 1) return "one " + t.network_switch().name + " switch";
  std::string kind = s.kind == topo::FabricKind::rail ? "rail-optimized" : "fat-tree";
  return fmt::format("{}-tier {} of {} (radix {}), oversubscription {}", s.tiers, kind, t.network_switch().name,
                     s.radix, oversubscription_words(s, t.spec().network.oversubscription));
}

std::string header(const Topology& t) {
  const auto& sp = t.spec();
  std::string out = fmt::format("gpufabric topo: {}", sp.name);
  if (!sp.description.empty()) out += " - " + sp.description;
  out += "\n";
  out +=
      fmt::format("  {} node{} x {} {} = {} GPUs; network {} ({}), {}; GPUDirect RDMA {}; P2P {}\n", t.nodes(),
                  t.nodes() == 1 ? "" : "s", t.gpus_per_node(), t.gpu_spec().name, t.gpu_count(), t.network().name,
                  t.network().transport, fabric_words(t), t.gpudirect_active() ? "on" : "off", sp.p2p ? "on" : "off");
  if (!sp.source.empty()) out += "  source: " + sp.source + "\n";
  return out;
}

std::string cpu_affinity(int socket, int cores) {
  if (socket < 0) return "";
  return fmt::format("{}-{}", socket * cores, (socket + 1) * cores - 1);
}

std::string connection_matrix(const Topology& t, int cores_per_socket) {
  const auto& node = t.node();
  const int g = node.gpus();
  const int n = node.nics();
  std::vector<std::string> head{""};
  for (int i = 0; i < g; ++i) head.push_back("GPU" + std::to_string(i));
  for (int i = 0; i < n; ++i) head.push_back("NIC" + std::to_string(i));
  head.emplace_back("CPU Affinity");
  head.emplace_back("NUMA Affinity");
  std::vector<TextTable::Align> align(head.size(), TextTable::Align::left);
  TextTable table(head, align);
  auto device = [&](int i) { return i < g ? node.gpu(i) : node.nic(i - g); };
  for (int r = 0; r < g + n; ++r) {
    std::vector<std::string> row{r < g ? "GPU" + std::to_string(r) : "NIC" + std::to_string(r - g)};
    for (int c = 0; c < g + n; ++c) {
      if (r == c)
        row.emplace_back("X");
      else if (r < g && c < g)
        row.push_back(node.gpu_to_gpu(r, c, t.spec().p2p).label());
      else
        row.push_back(node.pcie_path(device(r), device(c)).label());
    }
    const int socket = node.socket_of(device(r));
    row.push_back(r < g ? cpu_affinity(socket, cores_per_socket) : "");
    row.push_back(r < g ? std::to_string(socket) : "");
    table.add_row(row);
  }
  std::string out = table.render();
  out +=
      "\nLegend:\n"
      "  X    = the device itself\n"
      "  SYS  = path crosses PCIe and the link between CPU sockets (UPI / xGMI)\n"
      "  NODE = path crosses PCIe and goes between PCIe host bridges of one socket\n"
      "  PHB  = path crosses PCIe through one PCIe host bridge (the CPU root complex)\n"
      "  PXB  = path crosses several PCIe switches, not the host bridge\n"
      "  PIX  = path crosses at most one PCIe switch\n"
      "  NV#  = path over a bonded set of # NVLinks (direct, or through NVSwitch)\n";
  if (n > 0) {
    out += "\nNIC Legend:\n";
    const auto& nics = t.spec().node.nics;
    int k = 0;
    for (const auto& p : nics) {
      for (int c = 0; c < p.count; ++c, ++k) {
        out += fmt::format("  NIC{}: {} under {}\n", k, p.model, p.at.parent);
      }
    }
  }
  return out;
}

std::string gpu_matrix(const Topology& t, bool latency) {
  const auto& node = t.node();
  const int g = node.gpus();
  std::vector<std::string> head{latency ? "lat(us)" : "GB/s"};
  for (int i = 0; i < g; ++i) head.push_back(std::to_string(i));
  TextTable table(head);
  for (int r = 0; r < g; ++r) {
    std::vector<std::string> row{std::to_string(r)};
    for (int c = 0; c < g; ++c) {
      if (r == c) {
        row.emplace_back("N/A");
        continue;
      }
      const Route route = node.gpu_to_gpu(r, c, t.spec().p2p);
      row.push_back(latency ? us(route.latency) : gbps(route.bandwidth));
    }
    table.add_row(row);
  }
  return table.render(1);
}

std::string host_table(const Topology& t) {
  const int sockets = t.node().sockets();
  std::vector<std::string> head{"GPU", "NUMA", "H2D GB/s", "D2H GB/s", "latency us"};
  if (sockets > 1) {
    head.emplace_back("remote H2D GB/s");
    head.emplace_back("remote D2H GB/s");
  }
  TextTable table(head);
  for (int i = 0; i < t.gpus_per_node(); ++i) {
    const int s = t.node().socket_of(t.node().gpu(i));
    const Route h2d = t.route_memory_to_gpu(s, i);
    const Route d2h = t.route_gpu_to_memory(i, s);
    std::vector<std::string> row{std::to_string(i), std::to_string(s), gbps(h2d.bandwidth), gbps(d2h.bandwidth),
                                 us(h2d.latency)};
    if (sockets > 1) {
      const int other = (s + 1) % sockets;
      row.push_back(gbps(t.route_memory_to_gpu(other, i).bandwidth));
      row.push_back(gbps(t.route_gpu_to_memory(i, other).bandwidth));
    }
    table.add_row(row);
  }
  return table.render(1);
}

// The path a GPU's network traffic takes to its NIC: direct over PCIe with GPUDirect RDMA, else
// staged through a bounce buffer in host memory (GPU -> memory, then memory -> NIC), which is
// what inter-node routes model too.
Route gpu_to_nic_path(const Topology& t, int gpu, int nic) {
  Route direct = t.route_gpu_to_nic(gpu, nic);
  if (t.gpudirect_active()) {
    direct.transport = topo::Transport::gpudirect_rdma;
    return direct;
  }
  const auto& node = t.node();
  const int socket = node.socket_of(node.gpu(gpu));
  const Route down = node.to_memory(node.gpu(gpu), socket);
  const Route up = node.from_memory(socket, node.nic(nic));
  Route r = direct;  // keep the PCIe relationship (PIX, PXB, ...) nvidia-smi shows
  r.transport = topo::Transport::host_bounce;
  r.bandwidth = std::min(down.bandwidth, up.bandwidth);
  r.line_rate = std::min(down.line_rate, up.line_rate);
  r.latency = down.latency + up.latency;
  return r;
}

std::string nic_table(const Topology& t) {
  TextTable table({"GPU", "NIC", "model", "type", "transport", "GB/s", "latency us", "NIC line Gb/s"});
  for (int i = 0; i < t.gpus_per_node(); ++i) {
    const int nic = t.node().nic_of_gpu(i);
    if (nic < 0) continue;
    const Route r = gpu_to_nic_path(t, i, nic);
    const double line = t.fabric() != nullptr ? in_Gbps(t.fabric()->nic_line_rate()) : 0.0;
    std::string model;
    int k = 0;
    for (const auto& p : t.spec().node.nics) {
      if (nic >= k && nic < k + p.count) model = p.model;
      k += p.count;
    }
    table.add_row({std::to_string(i), std::to_string(nic), model, r.label(), to_string(r.transport), gbps(r.bandwidth),
                   us(r.latency), fmt::format("{:g}", line)});
  }
  return table.render(1);
}

std::string pair_name(const Topology& t, long gpu) {
  return fmt::format("node{}/gpu{}", gpu / t.gpus_per_node(), gpu % t.gpus_per_node());
}

std::string classes_table(const Topology& t, const topo::TopologySummary& s) {
  TextTable table({"pair class", "example", "type", "transport", "hops", "ECMP", "GB/s", "latency us"},
                  {TextTable::Align::left, TextTable::Align::left, TextTable::Align::left, TextTable::Align::left});
  for (const auto& c : s.classes) {
    table.add_row({c.name, pair_name(t, c.src) + " -> " + pair_name(t, c.dst), c.route.label(),
                   to_string(c.route.transport), std::to_string(c.route.links.size()),
                   std::to_string(c.route.ecmp_paths), gbps(c.route.bandwidth), us(c.route.latency)});
  }
  return table.render(1);
}

std::string summary_text(const Topology& t, const topo::TopologySummary& s) {
  using topo::DeviceKind;
  using topo::LinkKind;
  auto dev = [&](DeviceKind k) { return s.devices_by_kind[k]; };
  auto lnk = [&](LinkKind k) { return s.links_by_kind[k] / 2; };
  std::string out;
  out += fmt::format("  GPUs                {} ({} node{} x {})\n", s.gpus, s.nodes, s.nodes == 1 ? "" : "s",
                     t.gpus_per_node());
  out += fmt::format(
      "  devices             {} ({} GPU, {} CPU socket, {} memory, {} PCIe switch, {} NVSwitch plane, {} NIC, "
      "{} storage, {} network switch)\n",
      s.devices, dev(DeviceKind::gpu), dev(DeviceKind::cpu), dev(DeviceKind::memory), dev(DeviceKind::pcie_switch),
      dev(DeviceKind::nvswitch), dev(DeviceKind::nic), dev(DeviceKind::storage), dev(DeviceKind::net_switch));
  out += fmt::format("  links (duplex)      {} ({} NVLink, {} PCIe, {} socket, {} memory, {} network)\n", s.links / 2,
                     lnk(LinkKind::nvlink), lnk(LinkKind::pcie), lnk(LinkKind::socket), lnk(LinkKind::memory),
                     lnk(LinkKind::network));
  if (s.gpu_nvlink.value() > 0) {
    out += fmt::format("  NVLink per GPU      {} GB/s achievable, one direction\n", gbps(s.gpu_nvlink));
  }
  out += fmt::format("  GPU bisection/node  {} GB/s achievable, one direction\n", gbps(s.node_gpu_bisection));
  if (t.fabric() != nullptr) {
    out += fmt::format("  injection/node      {} NICs x {:g} Gb/s = {} GB/s line, {} GB/s achievable ({}{})\n",
                       t.node().nics(), in_Gbps(t.fabric()->nic_line_rate()), gbps(s.node_injection_line),
                       gbps(s.node_injection), t.network().name,
                       s.injection_pcie_capped ? "; NICs capped by their PCIe paths" : "");
    const auto& f = s.fabric;
    std::string shape = fabric_words(t);
    if (f.tiers == 2) shape += fmt::format("; {} leaves, {} spines", f.leaves, f.spines);
    if (f.tiers == 3)
      shape += fmt::format("; {} pods, {} leaves, {} aggregation, {} core switches", f.pods, f.leaves,
                           f.pods * f.aggs_per_pod, f.cores);
    out += "  fabric              " + shape + "\n";
    out += fmt::format("  network bisection   {} GB/s line, {} GB/s achievable, one direction\n",
                       gbps(s.bisection_line), gbps(s.bisection));
  }
  return out;
}

nlohmann::json route_json(const Topology& t, long src, long dst, const Route& r) {
  return {{"src", src},
          {"dst", dst},
          {"src_name", pair_name(t, src)},
          {"dst_name", pair_name(t, dst)},
          {"type", r.label()},
          {"transport", to_string(r.transport)},
          {"bandwidth_GBps", in_GBps(r.bandwidth)},
          {"line_rate_GBps", in_GBps(r.line_rate)},
          {"latency_us", in_us(r.latency)},
          {"hops", r.links.size()},
          {"ecmp_paths", r.ecmp_paths}};
}

}  // namespace

std::string topo_text(const Topology& t) {
  const auto s = topo::summarize(t);
  const int cores = t.cpu_spec().cores;
  std::string out = header(t);
  out += "\nConnection matrix (node 0), as nvidia-smi topo -m:\n\n";
  out += connection_matrix(t, cores);
  out += "\nPredicted unidirectional memcpy bandwidth, GPU(row) -> GPU(column), GB/s (node 0):\n";
  out += gpu_matrix(t, false);
  out += "\nPredicted one-way path latency, GPU(row) -> GPU(column), us (hardware hops, no software):\n";
  out += gpu_matrix(t, true);
  if (t.gpus_per_node() > 1 && t.node().gpu_to_gpu(0, 1, t.spec().p2p).transport == topo::Transport::host_staged) {
    out += "  note: peer-to-peer is off here, so GPU pairs are staged through host memory.\n";
  }
  out += "\nGPU <-> host memory (pinned DMA, GB/s):\n";
  out += host_table(t);
  if (t.node().nics() > 0) {
    out += t.gpudirect_active()
               ? "\nGPU <-> NIC (each GPU's nearest NIC, the GPUDirect RDMA path):\n"
               : "\nGPU <-> NIC (each GPU's nearest NIC; GPUDirect RDMA is off, so data is staged through host "
                 "memory):\n";
    out += nic_table(t);
  }
  if (t.nodes() > 1) {
    out += "\nAcross nodes (one example pair per class):\n";
    out += classes_table(t, s);
  }
  out += "\nSummary:\n";
  out += summary_text(t, s);
  return out;
}

std::string topo_json(const Topology& t) {
  const auto s = topo::summarize(t);
  nlohmann::json j;
  const auto& sp = t.spec();
  j["cluster"] = {{"name", sp.name},
                  {"description", sp.description},
                  {"source", sp.source},
                  {"nodes", t.nodes()},
                  {"gpus_per_node", t.gpus_per_node()},
                  {"gpus", t.gpu_count()},
                  {"gpu", t.gpu_spec().name},
                  {"gpu_fabric", topo::to_string(sp.node.gpu_fabric)},
                  {"network", t.network().name},
                  {"transport", t.network().transport},
                  {"fabric", topo::to_string(sp.network.fabric)},
                  {"gpudirect", t.gpudirect_active()},
                  {"p2p", sp.p2p}};
  nlohmann::json pairs = nlohmann::json::array();
  const bool all = t.gpu_count() <= kAllPairsLimit;
  const long limit = all ? t.gpu_count() : t.gpus_per_node();
  for (long a = 0; a < limit; ++a) {
    for (long b = 0; b < limit; ++b) {
      if (a != b) pairs.push_back(route_json(t, a, b, t.route_gpus(a, b)));
    }
  }
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& c : s.classes) {
    auto row = route_json(t, c.src, c.dst, c.route);
    row["class"] = c.name;
    classes.push_back(row);
    if (!all && c.dst >= t.gpus_per_node()) pairs.push_back(route_json(t, c.src, c.dst, c.route));
  }
  j["pairs_scope"] = all ? "all" : "node0+examples";
  j["pairs"] = pairs;
  j["pair_classes"] = classes;
  nlohmann::json host = nlohmann::json::array();
  nlohmann::json nics = nlohmann::json::array();
  for (int i = 0; i < t.gpus_per_node(); ++i) {
    for (int sock = 0; sock < t.node().sockets(); ++sock) {
      const Route h2d = t.route_memory_to_gpu(sock, i);
      const Route d2h = t.route_gpu_to_memory(i, sock);
      host.push_back({{"gpu", i},
                      {"socket", sock},
                      {"local", sock == t.node().socket_of(t.node().gpu(i))},
                      {"h2d_GBps", in_GBps(h2d.bandwidth)},
                      {"d2h_GBps", in_GBps(d2h.bandwidth)},
                      {"latency_us", in_us(h2d.latency)}});
    }
    for (int k = 0; k < t.node().nics(); ++k) {
      const Route r = gpu_to_nic_path(t, i, k);
      nics.push_back({{"gpu", i},
                      {"nic", k},
                      {"type", r.label()},
                      {"transport", to_string(r.transport)},
                      {"nearest", t.node().nic_of_gpu(i) == k},
                      {"bandwidth_GBps", in_GBps(r.bandwidth)},
                      {"latency_us", in_us(r.latency)}});
    }
  }
  j["gpu_host"] = host;
  j["gpu_nic"] = nics;
  nlohmann::json sum = {{"gpus", s.gpus},
                        {"nodes", s.nodes},
                        {"devices", s.devices},
                        {"links_duplex", s.links / 2},
                        {"nvlink_per_gpu_GBps", in_GBps(s.gpu_nvlink)},
                        {"node_gpu_bisection_GBps", in_GBps(s.node_gpu_bisection)},
                        {"node_injection_line_GBps", in_GBps(s.node_injection_line)},
                        {"node_injection_GBps", in_GBps(s.node_injection)},
                        {"node_injection_pcie_capped", s.injection_pcie_capped},
                        {"bisection_line_GBps", in_GBps(s.bisection_line)},
                        {"bisection_GBps", in_GBps(s.bisection)},
                        {"fabric_tiers", s.fabric.tiers},
                        {"leaves", s.fabric.leaves},
                        {"spines", s.fabric.spines},
                        {"pods", s.fabric.pods},
                        {"aggregation_switches", s.fabric.pods * s.fabric.aggs_per_pod},
                        {"core_switches", s.fabric.cores},
                        {"oversubscription", s.fabric.oversubscription}};
  j["summary"] = sum;
  return j.dump(2) + "\n";
}

std::string topo_dot(const Topology& t) {
  const auto& g = t.graph();
  if (g.device_count() > kDotDeviceLimit) {
    throw InputError({}, "--dot", fmt::format("the graph has {} devices, too many to draw", g.device_count()),
                     fmt::format("a cluster of at most {} devices (try fewer --nodes)", kDotDeviceLimit));
  }
  std::string out =
      "graph \"" + t.spec().name + "\" {\n  graph [overlap=false, splines=true];\n  node [shape=box, fontsize=10];\n";
  for (topo::DeviceId d = 0; d < g.device_count(); ++d) {
    const auto& dev = g.device(d);
    if (dev.kind == topo::DeviceKind::fabric_plane) continue;
    const char* shape = dev.kind == topo::DeviceKind::gpu                                                    ? "box3d"
                        : dev.kind == topo::DeviceKind::net_switch || dev.kind == topo::DeviceKind::nvswitch ? "hexagon"
                        : dev.kind == topo::DeviceKind::cpu ? "component"
                                                            : "box";
    out += fmt::format("  \"{}\" [shape={}];\n", g.name(d), shape);
  }
  for (topo::LinkId l = 0; l < g.link_count(); l += 2) {
    const auto& link = g.link(l);
    if (link.kind == topo::LinkKind::bundle) continue;
    out += fmt::format("  \"{}\" -- \"{}\" [label=\"{} {} GB/s\"];\n", g.name(link.src), g.name(link.dst),
                       to_string(link.kind), fixed(in_GBps(link.line_rate), 1));
  }
  out += "}\n";
  return out;
}

}  // namespace gf::report
