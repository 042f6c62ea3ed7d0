#include "probe/probe_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/table.hpp"

namespace gf::probe {

namespace {

using report::TextTable;
constexpr auto L = TextTable::Align::left;
constexpr auto R = TextTable::Align::right;

std::string link(const PcieState& s) {
  if (s.generation == 0 && s.max_generation == 0) return "-";
  return fmt::format("Gen{} x{} (max Gen{} x{})", s.generation, s.width, s.max_generation, s.max_width);
}

std::string size_text(double bytes) {
  if (bytes >= 1048576) return fmt::format("{:g} MiB", bytes / 1048576);
  if (bytes >= 1024) return fmt::format("{:g} KiB", bytes / 1024);
  return fmt::format("{:g} B", bytes);
}

std::string f1(double v) { return fmt::format("{:.1f}", v); }
std::string f2(double v) { return fmt::format("{:.2f}", v); }

void discovery_text(const Discovery& d, std::string& out) {
  out += fmt::format("Machine: {}\n  CPU: {} ({} package(s), {} cores, {} threads)\n  memory: {:.1f} GB\n", d.hostname,
                     d.cpu_model.empty() ? "unknown" : d.cpu_model, d.packages, d.cores, d.threads, in_GB(d.memory));
  for (const auto& n : d.numa_nodes) {
    out += fmt::format("  NUMA node {}: {:.1f} GB, {} cores\n", n.os_index, in_GB(n.memory), n.cores);
  }
  if (!d.gpus.empty()) {
    TextTable t({"GPU", "name", "PCI", "PCIe link", "NVLinks"}, {R, L, L, L, R});
    for (const auto& g : d.gpus) {
      t.add_row({std::to_string(g.index), g.name, g.pci_address,
                 link(g.pcie) + (g.pcie_under_load ? " under load" : ""),
                 g.nvlinks_active < 0 ? "-" : std::to_string(g.nvlinks_active)});
    }
    out += "\nGPUs (" + d.gpu_source + "):\n" + t.render(2);
  }
  if (!d.nics.empty()) {
    TextTable t({"NIC", "kind", "model", "speed Gb/s", "state", "PCI", "PCIe link"}, {L, L, L, R, L, L, L});
    for (const auto& n : d.nics) {
      t.add_row({n.name, n.kind, n.model.empty() ? fmt::format("{:04x}:{:04x}", n.vendor_id, n.device_id) : n.model,
                 n.speed ? fmt::format("{:g}", in_Gbps(*n.speed)) : "-", n.state, n.pci_address, link(n.pcie)});
    }
    out += "\nNICs (sysfs):\n" + t.render(2);
  }
  if (!d.pci_devices.empty()) {
    TextTable t({"PCI", "class", "vendor:device", "link GB/s", "OS devices", "name"}, {L, L, L, R, L, L});
    for (const auto& x : d.pci_devices) {
      std::string os;
      for (const auto& o : x.os_devices) os += (os.empty() ? "" : ",") + o;
      t.add_row({x.address, fmt::format("{:04x}", x.class_id), fmt::format("{:04x}:{:04x}", x.vendor_id, x.device_id),
                 x.link ? f1(in_GBps(*x.link)) : "-", os.empty() ? "-" : os, x.name.empty() ? "-" : x.name});
    }
    out += "\nPCI devices (hwloc):\n" + t.render(2);
  }
}

void collective_line(const char* what, const CollectiveResult& c, std::string& out) {
  out += fmt::format("  {} {} over {} rank(s), {}: {:.1f} us, algbw {:.2f} GB/s, busbw {:.2f} GB/s\n", c.library, what,
                     c.ranks, size_text(c.size.value()), in_us(c.time), in_GBps(c.algbw), in_GBps(c.busbw));
}

void gpu_text(const GpuResults& g, std::string& out) {
  if (g.copies.empty() && g.peers.empty() && !g.nccl) out += "\nGPU:\n";
  if (!g.copies.empty()) {
    std::set<double> sizes;
    for (const auto& c : g.copies) {
      for (const auto& p : c.points) sizes.insert(p.size.value());
    }
    std::vector<std::string> head = {"GPU", "copy", "memory"};
    std::vector<TextTable::Align> align = {R, L, L};
    for (double s : sizes) head.push_back(size_text(s)), align.push_back(R);
    TextTable t(head, align);
    for (const auto& c : g.copies) {
      std::vector<std::string> row = {std::to_string(c.gpu), c.direction, c.memory};
      std::map<double, const CopyPoint*> at;  // the first point of each size, as a search would find
      for (const auto& p : c.points) at.emplace(p.size.value(), &p);
      for (double s : sizes) {
        const auto it = at.find(s);
        row.push_back(it == at.end() ? "-" : f2(in_GBps(it->second->bandwidth)));
      }
      t.add_row(row);
    }
    out += "\nGPU copies (GB/s; cudaMemcpyAsync timed with CUDA events):\n" + t.render(2);
  }
  if (!g.peers.empty()) {
    int n = 0;
    for (const auto& p : g.peers) n = std::max({n, p.src + 1, p.dst + 1});
    std::vector<std::string> head = {"src\\dst"};
    std::vector<TextTable::Align> align = {L};
    for (int i = 0; i < n; ++i) head.push_back("GPU" + std::to_string(i)), align.push_back(R);
    TextTable t(head, align);
    std::map<std::pair<int, int>, const PeerCopy*> at;  // the first copy of each pair
    for (const auto& p : g.peers) at.emplace(std::pair{p.src, p.dst}, &p);
    for (int s = 0; s < n; ++s) {
      std::vector<std::string> row = {"GPU" + std::to_string(s)};
      for (int d = 0; d < n; ++d) {
        if (s == d) {
          row.push_back("X");
          continue;
        }
        const auto it = at.find({s, d});
        row.push_back(it == at.end() ? "-" : f1(in_GBps(it->second->bandwidth)) + (it->second->peer_access ? "" : "*"));
      }
      t.add_row(row);
    }
    out +=
        "\nGPU-to-GPU copies (GB/s, one direction, cudaMemcpyPeerAsync; * = no peer access, staged by the driver):\n" +
        t.render(2);
  }
  if (g.nccl) {
    out += "\nNCCL:\n";
    collective_line("all_reduce", *g.nccl, out);
  }
  for (const auto& n : g.notes) out += "  note: " + n + "\n";
}

void mpi_text(const MpiResults& m, std::string& out) {
  out += fmt::format("\nMPI ({} ranks on {} host(s), {}):\n", m.ranks, m.hosts, m.library);
  for (const auto& p : m.pairs) {
    out += fmt::format("  rank {} ({}) <-> rank {} ({}): {} ping-pong bandwidth {:.2f} GB/s, 8 B latency {:.2f} us\n",
                       p.rank_a, p.host_a, p.rank_b, p.host_b, size_text(p.size.value()), in_GBps(p.bandwidth),
                       in_us(p.latency));
  }
  if (m.allreduce) collective_line("MPI_Allreduce", *m.allreduce, out);
  if (m.nccl) collective_line("all_reduce", *m.nccl, out);
  for (const auto& n : m.notes) out += "  note: " + n + "\n";
}

}  // namespace

std::string profile_text(const Profile& p) {
  std::string out;
  discovery_text(p.discovery, out);
  if (!p.memory.empty()) {
    TextTable t({"domain", "threads", "array MiB", "LLC MiB", "copy GB/s", "triad GB/s"}, {L, R, R, R, R, R});
    bool small = false;
    for (const auto& m : p.memory) {
      // STREAM's rule: each array at least 4x the last-level cache, or the figure includes cache hits.
      const bool below_rule = m.array_size.value() < 4 * m.llc.value();
      small = small || below_rule;
      t.add_row({m.numa_node < 0 ? "machine" : "node " + std::to_string(m.numa_node), std::to_string(m.threads),
                 fmt::format("{:.0f}{}", m.array_size.value() / 1048576, below_rule ? "*" : ""),
                 fmt::format("{:.0f}", m.llc.value() / 1048576), f1(in_GBps(m.copy)), f1(in_GBps(m.triad))});
    }
    out += fmt::format("\nHost memory bandwidth (STREAM copy and triad, best of {} after a warm-up):\n",
                       p.memory.front().repetitions - 1) +
           t.render(2);
    if (small) out += "  * arrays below 4 x LLC (bounded by free memory): the figure may include cache hits\n";
  }
  if (p.storage) {
    const auto& s = *p.storage;
    out += fmt::format(
        "\nStorage sequential read ({} on {}, {} file):\n  write+fsync {:.2f} GB/s, read {:.2f} GB/s ({})\n",
        s.directory, s.filesystem, size_text(s.file_size.value()), in_GBps(s.write), in_GBps(s.read), s.note);
  }
  if (p.decode) {
    const auto& d = *p.decode;
    out += fmt::format(
        "\nCPU preprocessing:\n  JPEG decode {}x{} q{} ({:.1f} KB, libjpeg-turbo): {:.0f} images/s per core, {:.0f} "
        "images/s on {} threads\n  zlib inflate (ratio {:.2f}): {:.0f} MB/s per core, {:.0f} MB/s on {} threads\n",
        d.width, d.height, d.quality, d.jpeg_size.value() / 1e3, d.jpeg_per_core.value(), d.jpeg_all_cores.value(),
        d.threads, d.deflate_ratio, d.inflate_per_core.value() / 1e6, d.inflate_all_cores.value() / 1e6, d.threads);
  }
  if (p.gpu) gpu_text(*p.gpu, out);
  if (p.mpi) mpi_text(*p.mpi, out);
  if (!p.discovery.notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : p.discovery.notes) out += "  " + n + "\n";
  }
  return out;
}

std::string compare_text(const std::vector<Expectation>& rows) {
  TextTable t({"check", "measured", "expected", "status", "basis"}, {L, R, R, L, L});
  int below = 0;
  for (const auto& r : rows) {
    t.add_row({r.item, r.measured, r.expected, to_string(r.status), r.basis});
    below += r.status == Status::below ? 1 : 0;
  }
  return fmt::format("\nMeasured against expected ({} BELOW):\n", below) + t.render(2);
}

nlohmann::json compare_json(const std::vector<Expectation>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"check", r.item},
                   {"measured", r.measured},
                   {"expected", r.expected},
                   {"status", to_string(r.status)},
                   {"basis", r.basis}});
  }
  return out;
}

}  // namespace gf::probe
