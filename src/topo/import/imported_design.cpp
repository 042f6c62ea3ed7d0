#include "topo/import/imported_design.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "topo/cluster_loader.hpp"
#include "topo/import/identify.hpp"
#include "topo/topology.hpp"

namespace gf::topo::import {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A YAML comment: one line, no control characters.
std::string comment(const std::string& note) {
  std::string out;
  for (const char c : note) out += (c == '\n' || c == '\r') ? ' ' : c;
  return out.empty() ? "" : "  # " + out;
}

std::string attachment(const ImportedAttachment& a) {
  if (!a.host_bridge && !a.lanes && !a.generation) return a.parent;
  std::string s = "{parent: " + a.parent;
  if (a.host_bridge) s += ", host_bridge: " + std::to_string(*a.host_bridge);
  if (a.lanes) s += ", lanes: " + std::to_string(*a.lanes);
  if (a.generation) s += ", generation: " + std::to_string(*a.generation);
  return s + "}";
}

void apply_gpu(ImportedDesign& d, const std::string& name, const hw::Catalog& catalog) {
  const auto& g = catalog.gpu(name, {}, "--gpu");
  if (d.gpu_fabric != GpuFabric::pcie && !g.nvlink) {
    throw InputError({}, "--gpu", "GPU '" + g.name + "' has no NVLink; the file's GPUs are joined by NVLink",
                     "a GPU with NVLink");
  }
  d.gpu = {g.name, ""};
}

void apply_network(ImportedDesign& d, const std::string& name, const hw::Catalog& catalog) {
  const auto& net = catalog.network(name, {}, "--network");
  d.network = {net.name, ""};
  std::vector<std::string> swapped;
  for (auto& nic : d.nics) {
    const auto& have = catalog.nic(nic.model);
    const bool runs = std::find(have.families.begin(), have.families.end(), net.family) != have.families.end();
    if (!runs || have.max_rate < net.data_rate) {
      if (std::find(swapped.begin(), swapped.end(), have.name) == swapped.end()) swapped.push_back(have.name);
      nic.model = net.default_nic;
    }
  }
  if (!swapped.empty()) {
    d.notes.push_back("--network " + net.name + ": NIC " + join(swapped) + " replaced by " + net.default_nic +
                      ", the NIC " + net.name + " implies");
  }
}

// The NVSwitch generation whose ports are the GPU's NVLink generation, and, where the file did
// not count the switch chips, NVIDIA's baseboard count for it.
void settle_nvswitch(ImportedDesign& d, const hw::Catalog& catalog) {
  if (d.gpu_fabric != GpuFabric::nvswitch) return;
  const auto& g = catalog.gpu(d.gpu.value);
  d.nvswitch_generation = 0;
  for (const auto& [gen, sw] : catalog.nvswitch_generations()) {
    if (sw.nvlink_generation == g.nvlink->generation) d.nvswitch_generation = gen;
  }
  if (d.nvswitch_generation == 0) {
    throw InputError(
        {}, "--gpu",
        "no catalog NVSwitch has NVLink " + std::to_string(g.nvlink->generation) + " ports for GPU '" + g.name + "'",
        "a GPU of an NVSwitch generation in the catalog");
  }
  const auto& sw = catalog.nvswitch(d.nvswitch_generation);
  if (d.nvswitch_count == 0) {
    if (const auto preset = nvswitch_count_of_preset(catalog, d.nvswitch_generation)) {
      d.nvswitch_count = preset->first;
      d.nvswitch_note = "the file does not count the NVSwitch chips: " + std::to_string(preset->first) +
                        ", as on NVIDIA's baseboard of this generation (preset " + preset->second + ")";
    }
  }
  const int needed = (g.nvlink->links * d.gpus + sw.ports - 1) / sw.ports;
  if (d.nvswitch_count < needed) {
    d.nvswitch_note = "the file's " + std::to_string(d.nvswitch_count) + " NVSwitch chips of " +
                      std::to_string(sw.ports) + " ports cannot take " + std::to_string(g.nvlink->links * d.gpus) +
                      " GPU NVLinks: " + std::to_string(needed) + " written";
    d.nvswitch_count = needed;
  }
}

std::string render(const ImportedDesign& d) {
  std::string y;
  y += "# Imported by gpufabric from " + d.source + "\n";
  y += "# Values the file does not state carry a comment saying which default was chosen: check them.\n";
  y += "name: " + d.name + "\n";
  y += "description: " + quoted(d.description) + "\n";
  y += "source: " + quoted(d.source) + "\n";
  y += "nodes: " + std::to_string(d.nodes) + "\n";
  y += std::string("gpudirect: ") + (d.gpudirect ? "true" : "false") + comment(d.gpudirect_note) + "\n";
  y += "p2p: true\n\nnode:\n";
  y += "  gpu: " + d.gpu.value + comment(d.gpu.note) + "\n";
  y += "  gpus: " + std::to_string(d.gpus) + "\n";
  y += "  cpu: " + d.cpu.value + comment(d.cpu.note) + "\n";
  y += "  sockets: " + std::to_string(d.sockets) + "\n";
  y += fmt::format("  host_memory_GB: {:g}", d.host_memory_GB) + comment(d.host_memory_note) + "\n";
  y += std::string("  gpu_fabric: ") + to_string(d.gpu_fabric) + "\n";
  if (d.gpu_fabric == GpuFabric::nvswitch) {
    y += "  nvswitch: {generation: " + std::to_string(d.nvswitch_generation) +
         ", count: " + std::to_string(d.nvswitch_count) + "}" + comment(d.nvswitch_note) + "\n";
  }
  if (d.gpu_fabric == GpuFabric::nvlink_mesh) {
    y += "  nvlink_mesh:\n";
    for (const auto& e : d.nvlink_mesh) {
      y += fmt::format("    - {{gpus: [{}, {}], links: {}}}\n", e.a, e.b, e.links);
    }
  }
  if (!d.switches.empty()) {
    y += "  pcie_switches:\n";
    for (const auto& s : d.switches) {
      y += "    - {name: " + s.name + ", parent: " + s.parent + ", generation: " + std::to_string(s.generation) +
           ", lanes: " + std::to_string(s.lanes) +
           (s.host_bridge ? ", host_bridge: " + std::to_string(*s.host_bridge) : std::string()) + "}" +
           comment(s.comment) + "\n";
    }
  }
  y += "  gpu_parents:\n";
  for (const auto& p : d.gpu_parents) y += "    - " + attachment(p) + "\n";
  if (!d.nics.empty()) {
    y += "  nics:" + comment(d.nics_note) + "\n";
    for (const auto& n : d.nics) {
      std::string line = "    - {model: " + n.model + ", parent: " + n.at.parent;
      if (n.at.host_bridge) line += ", host_bridge: " + std::to_string(*n.at.host_bridge);
      if (n.at.lanes) line += ", lanes: " + std::to_string(*n.at.lanes);
      if (n.at.generation) line += ", generation: " + std::to_string(*n.at.generation);
      y += line + "}" + comment(n.note.empty() ? n.comment : n.comment + ": " + n.note) + "\n";
    }
  }
  y += "\nnetwork:\n  tech: " + d.network.value + comment(d.network.note) + "\n";
  return y;
}

}  // namespace

ImportedCluster finish(ImportedDesign d, const ImportOptions& o, const hw::Catalog& catalog) {
  if (o.nodes) {
    if (*o.nodes < 1 || *o.nodes > 1'000'000) {
      throw InputError({}, "--nodes", "got " + std::to_string(*o.nodes), "1 to 1000000");
    }
    d.nodes = *o.nodes;
  }
  if (o.gpu) apply_gpu(d, *o.gpu, catalog);
  if (o.cpu) d.cpu = {catalog.cpu(*o.cpu, {}, "--cpu").name, ""};
  if (o.network) apply_network(d, *o.network, catalog);
  const auto& gpu = catalog.gpu(d.gpu.value);
  if (d.nvlink_unknown && o.gpu && gpu.nvlink && gpu.nvlink->generation > 0) {
    d.gpu_fabric = GpuFabric::nvswitch;
    d.nvswitch_count = 0;
    d.gpu.note = "the file names GPUs by PCI class only, without NVLink: " + gpu.name +
                 " (--gpu) is put on its generation's NVSwitch; check";
  }
  if (d.gpu_fabric != GpuFabric::pcie && !gpu.nvlink) {
    throw InputError({}, "--gpu", "GPU '" + gpu.name + "' has no NVLink; the file's GPUs are joined by NVLink",
                     "--gpu with a GPU that has NVLink");
  }
  settle_nvswitch(d, catalog);
  if (d.switches_at_gpu_generation && !d.switches.empty()) {
    for (auto& sw : d.switches) sw.generation = gpu.pcie.generation;
    d.notes.push_back("the file shows no link speeds: PCIe switches written as Gen" +
                      std::to_string(gpu.pcie.generation) + " x16, the GPU's own link");
  }

  ImportedCluster out;
  out.yaml = render(d);
  try {
    ClusterSpec spec = parse_cluster(out.yaml, "the imported cluster", catalog);
    spec.nodes = 1;  // the node is what the file describes; --nodes only scales it
    (void)Topology(std::move(spec), catalog);
  } catch (const InputError& e) {
    throw InputError({d.file, 0, 0}, e.field(), "the design this file describes does not build: " + e.problem(),
                     e.valid());
  }
  auto warn = [&](const std::string& what, const std::string& note) {
    if (!note.empty()) out.warnings.push_back(what + note);
  };
  warn("gpu " + d.gpu.value + ": ", d.gpu.note);
  warn("cpu " + d.cpu.value + ": ", d.cpu.note);
  warn(fmt::format("host_memory_GB {:g}: ", d.host_memory_GB), d.host_memory_note);
  warn("nvswitch count " + std::to_string(d.nvswitch_count) + ": ", d.nvswitch_note);
  warn("gpudirect: ", d.gpudirect_note);
  warn("nics: ", d.nics_note);
  std::vector<std::string> nic_notes;  // one warning per distinct note, not per NIC
  for (const auto& n : d.nics) {
    if (n.note.empty() || std::find(nic_notes.begin(), nic_notes.end(), n.note) != nic_notes.end()) continue;
    nic_notes.push_back(n.note);
    warn("NIC " + n.model + ": ", n.note);
  }
  warn("network " + d.network.value + ": ", d.network.note);
  for (const auto& n : d.notes) out.warnings.push_back(n);
  out.gpus = d.gpus;
  out.nvlinks_per_gpu = gpu.nvlink && d.gpu_fabric != GpuFabric::pcie ? gpu.nvlink->links : 0;
  out.nics = static_cast<int>(d.nics.size());
  return out;
}

}  // namespace gf::topo::import
