#include "probe/expectations.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "probe/catalog_match.hpp"

namespace gf::probe {

namespace {

std::string link_text(int gen, int width) {
  return fmt::format("Gen{} x{}", gen > 0 ? std::to_string(gen) : "?", width > 0 ? std::to_string(width) : "?");
}

std::string gbps(Bandwidth b) { return fmt::format("{:.1f} GB/s", in_GBps(b)); }

void gpu_checks(const Profile& p, const GpuInfo& g, const hw::Catalog& catalog, std::vector<Expectation>& out) {
  std::string model = gpu_model_for_name(g.name);
  const auto found = catalog.gpus().find(model);
  const hw::GpuSpec* spec = found == catalog.gpus().end() ? nullptr : &found->second;
  if (!spec) model.clear();
  const std::string tag = fmt::format("GPU{}", g.index);

  // The link the GPU should train to: the larger of what the device reports as its maximum and
  // what the catalog says the part supports.
  int want_gen = g.pcie.max_generation;
  int want_width = g.pcie.max_width;
  std::string basis =
      fmt::format("max link {} ({})", link_text(g.pcie.max_generation, g.pcie.max_width), p.discovery.gpu_source);
  if (spec) {
    want_gen = std::max(want_gen, spec->pcie.generation);
    want_width = std::max(want_width, spec->pcie.lanes);
    basis += fmt::format("; catalog {} {}", model, link_text(spec->pcie.generation, spec->pcie.lanes));
  } else {
    basis += "; GPU model not in catalog";
  }
  if (g.pcie.generation > 0 && g.pcie.width > 0 && want_gen > 0 && want_width > 0) {
    Expectation e;
    e.item = tag + " PCIe link";
    e.measured = link_text(g.pcie.generation, g.pcie.width);
    e.expected = link_text(want_gen, want_width);
    e.status = g.pcie.generation < want_gen || g.pcie.width < want_width ? Status::below : Status::ok;
    if (e.status == Status::below && !g.pcie_under_load && g.pcie.generation < want_gen) {
      basis +=
          "; read while idle (idle GPUs lower the generation to save power: run the GPU probes to read it under load)";
    }
    e.basis = basis;
    out.push_back(e);
  }

  if (spec && spec->nvlink && spec->nvlink->generation > 0 && g.nvlinks_active >= 0) {
    // PCIe cards list bridge links that may not be fitted; only an SXM-style part (or one with
    // some links up) must have all of them.
    const bool must = g.nvlinks_active > 0 || model.find("sxm") != std::string::npos || model == "b200";
    if (must) {
      Expectation e;
      e.item = tag + " NVLinks active";
      e.measured = std::to_string(g.nvlinks_active);
      e.expected = std::to_string(spec->nvlink->links);
      e.status = g.nvlinks_active < spec->nvlink->links ? Status::below : Status::ok;
      e.basis = fmt::format("catalog {}: NVLink{} x{}", model, spec->nvlink->generation, spec->nvlink->links);
      out.push_back(e);
    }
  }

  if (!p.gpu || want_gen <= 0 || want_width <= 0) return;
  const auto pcie = catalog.pcie_generations().find(want_gen);
  if (pcie == catalog.pcie_generations().end()) return;
  const Bandwidth achievable = pcie->second.line_rate(want_width) * pcie->second.copy_efficiency;
  for (const auto& c : p.gpu->copies) {
    if (c.gpu != g.index || c.memory != "pinned" || c.points.empty()) continue;
    const auto& largest = *std::max_element(c.points.begin(), c.points.end(),
                                            [](const CopyPoint& a, const CopyPoint& b) { return a.size < b.size; });
    Expectation e;
    e.item = fmt::format("{} {} pinned {:.0f} MiB", tag, c.direction == "h2d" ? "H2D" : "D2H",
                         largest.size.value() / 1048576);
    e.measured = gbps(largest.bandwidth);
    e.expected = ">= " + gbps(achievable * kCopyFloor);
    e.status = largest.bandwidth < achievable * kCopyFloor ? Status::below : Status::ok;
    e.basis = fmt::format("{:.0f}% of {} x {:.3f} GB/s x{} x copy_efficiency {:.2f} = {}", kCopyFloor * 100,
                          link_text(want_gen, want_width), in_GBps(pcie->second.lane_rate), want_width,
                          pcie->second.copy_efficiency, gbps(achievable));
    out.push_back(e);
  }
}

void nic_checks(const NicInfo& n, const hw::Catalog& catalog, std::vector<Expectation>& out) {
  Expectation e;
  e.item = fmt::format("NIC {} speed", n.name);
  // sysfs gives no speed while a link is down, and virtual NICs (virtio) never give one.
  e.measured = n.speed ? fmt::format("{:g} Gb/s", in_Gbps(*n.speed)) : fmt::format("no speed ({})", n.state);
  const auto it = n.model.empty() ? catalog.nics().end() : catalog.nics().find(n.model);
  if (it == catalog.nics().end()) {
    e.basis = fmt::format("PCI {:04x}:{:04x} not in catalog", n.vendor_id, n.device_id);
  } else {
    const Bandwidth max = it->second.max_rate;
    e.expected = fmt::format("{:g} Gb/s", in_Gbps(max));
    // Link rates are exact figures (100000 Mb/s, "400 Gb/sec"); 1% absorbs rounding only.
    e.status = n.speed && *n.speed >= max * 0.99 ? Status::ok : Status::below;
    e.basis = fmt::format("catalog {}: up to {:g} Gb/s per port", n.model, in_Gbps(max));
  }
  out.push_back(e);
  if (n.pcie.generation > 0 && n.pcie.max_generation > 0) {
    Expectation l;
    l.item = fmt::format("NIC {} PCIe link", n.name);
    l.measured = link_text(n.pcie.generation, n.pcie.width);
    int gen = n.pcie.max_generation;
    int width = n.pcie.max_width;
    l.basis = "max link (sysfs)";
    if (it != catalog.nics().end()) {
      gen = std::max(gen, it->second.pcie.generation);
      width = std::max(width, it->second.pcie.lanes);
      l.basis += fmt::format("; catalog {} {}", n.model, link_text(it->second.pcie.generation, it->second.pcie.lanes));
    }
    l.expected = link_text(gen, width);
    l.status = n.pcie.generation < gen || n.pcie.width < width ? Status::below : Status::ok;
    out.push_back(l);
  }
}

void memory_checks(const Profile& p, const hw::Catalog& catalog, std::vector<Expectation>& out) {
  const std::string model = cpu_model_for_name(p.discovery.cpu_model, catalog);
  const int packages = std::max(1, p.discovery.packages);
  int nodes_with_cores = 0;
  for (const auto& n : p.discovery.numa_nodes) nodes_with_cores += n.cores > 0 ? 1 : 0;
  nodes_with_cores = std::max(1, nodes_with_cores);
  for (const auto& m : p.memory) {
    Expectation e;
    e.item = m.numa_node < 0 ? "memory triad (machine)" : fmt::format("memory triad (node {})", m.numa_node);
    e.measured = gbps(m.triad);
    if (model.empty()) {
      e.basis = "CPU '" + p.discovery.cpu_model + "' not in catalog";
    } else {
      const auto& cpu = catalog.cpus().at(model);
      // Per-socket theoretical bandwidth, shared evenly by the NUMA nodes of a socket (SNC/NPS).
      const double sockets = m.numa_node < 0 ? packages : static_cast<double>(packages) / nodes_with_cores;
      const Bandwidth theoretical = cpu.memory_bandwidth * sockets;
      e.expected = ">= " + gbps(theoretical * kMemoryFloor);
      e.status = m.triad < theoretical * kMemoryFloor ? Status::below : Status::ok;
      e.basis = fmt::format("{:.0f}% of {} theoretical ({} {} x{} {:g} MT/s x {:g} socket(s)), {} threads",
                            kMemoryFloor * 100, gbps(theoretical), model, cpu.memory_type, cpu.memory_channels,
                            cpu.memory_mts, sockets, m.threads);
    }
    out.push_back(e);
  }
}

}  // namespace

std::string to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::below: return "BELOW";
    case Status::none: return "-";
  }
  return "-";
}

std::vector<Expectation> compare(const Profile& profile, const hw::Catalog& catalog) {
  std::vector<Expectation> out;
  memory_checks(profile, catalog, out);
  for (const auto& g : profile.discovery.gpus) gpu_checks(profile, g, catalog, out);
  for (const auto& n : profile.discovery.nics) nic_checks(n, catalog, out);
  return out;
}

}  // namespace gf::probe
