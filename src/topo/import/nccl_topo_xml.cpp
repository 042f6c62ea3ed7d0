#include "topo/import/nccl_topo_xml.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <pugixml.hpp>
#include <set>

#include "topo/import/identify.hpp"
#include "topo/import/source_text.hpp"

namespace gf::topo::import {

namespace {

constexpr const char* kClasses =
    "0x0604xx (PCI bridge / switch), 0x0300xx or 0x0302xx (GPU), 0x0200xx (Ethernet) or 0x0207xx (InfiniBand) NIC";

Bandwidth gbps(double v) { return Bandwidth(v * 1e9 / 8); }

struct Link {
  std::optional<int> generation;
  bool below_catalog = false;  // a rate under every catalog generation (2.5 GT/s), written as the lowest
  std::optional<int> lanes;    // unset: the file hides it (link_width="0", as in VMs)
};

struct NvlinkTo {
  std::string target;
  int count = 0;
  unsigned tclass = 0;
};

struct Gpu {
  std::string busid;
  int dev = -1;
  int sm = 0;
  unsigned device = 0;
  bool described = false;  // has a <gpu> element (NCCL's own dump) rather than a PCI class only
  ImportedAttachment at;
  std::vector<NvlinkTo> nvlinks;
};

struct Nic {
  ImportedAttachment at;
  std::string name;
  double speed_Mbps = 0;  // 0: not in the file
  bool infiniband = false;
  bool mellanox = false;
  std::optional<bool> gdr;
  Link link;
};

class Reader {
public:
  Reader(const std::string& text, const std::string& file, const hw::Catalog& catalog)
      : text_(text), file_(file), catalog_(catalog), id_(Identify::builtin()) {}

  ImportedDesign read();

private:
  const std::string& text_;
  const std::string& file_;
  const hw::Catalog& catalog_;
  const Identify& id_;
  ImportedDesign d_;
  std::vector<Gpu> gpus_;
  std::vector<Nic> nics_;
  std::set<std::string> hidden_links_;  // devices whose link_width the file hides
  // One warning per kind of oddity, listing where it was seen (eight bridges, not eight warnings).
  std::map<std::string, std::vector<std::string>> noted_;

  [[nodiscard]] int line_of(const pugi::xml_node& n) const { return line_at(text_, n.offset_debug()); }
  [[noreturn]] void fail(const pugi::xml_node& n, const std::string& field, const std::string& problem,
                         const std::string& valid = {}) const {
    throw InputError({file_, line_of(n), 0}, field, problem, valid);
  }
  unsigned hex_attr(const pugi::xml_node& n, const char* name) const;
  int int_attr(const pugi::xml_node& n, const char* name, int fallback) const;
  Link link_of(const pugi::xml_node& n, const std::string& what);
  void walk(const pugi::xml_node& parent, const std::string& parent_name);
  void add_switch(const pugi::xml_node& pci, const std::string& parent_name);
  void add_gpu(const pugi::xml_node& pci, const pugi::xml_node& gpu, const std::string& parent_name);
  void add_nics(const pugi::xml_node& pci, const pugi::xml_node& nic, const std::string& parent_name);
  void read_cpu(const pugi::xml_node& cpu);
  void settle_gpus();
  void identify_gpu(int nvlinks, bool any_described);
  void settle_nics();
  void drop_empty_switches();
};

unsigned Reader::hex_attr(const pugi::xml_node& n, const char* name) const {
  const std::string s = n.attribute(name).as_string();
  char* end = nullptr;
  const unsigned long v = std::strtoul(s.c_str(), &end, 16);
  if (s.empty() || end == s.c_str() || *end != '\0' || v > 0xffffffffUL) {
    fail(n, name, "'" + shown(s) + "' is not a hexadecimal number", std::string(name) + "=\"0x030200\"");
  }
  return static_cast<unsigned>(v);
}

int Reader::int_attr(const pugi::xml_node& n, const char* name, int fallback) const {
  const auto a = n.attribute(name);
  if (!a) return fallback;
  const std::string s = a.as_string();
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || v > 1'000'000) {
    fail(n, name, "'" + shown(s) + "' is not a whole number", "0 to 1000000");
  }
  return static_cast<int>(v);
}

// NCCL writes link_speed as sysfs has it ("16.0 GT/s PCIe", older kernels "16 GT/s") and
// link_width as a lane count; a VM may show width 0.
Link Reader::link_of(const pugi::xml_node& n, const std::string& what) {
  Link l;
  if (const auto s = n.attribute("link_speed"); s) {
    const std::string v = s.as_string();
    char* end = nullptr;
    const double gt = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || v.find("GT/s") == std::string::npos) {
      fail(n, "link_speed", "'" + shown(v) + "' is not a PCIe transfer rate", "e.g. link_speed=\"16.0 GT/s PCIe\"");
    }
    l.generation = pcie_generation_of_rate(catalog_, gt);
    if (!l.generation) {
      // 2.5 GT/s (Gen1): what a VM's virtual bridge shows; below every catalog generation.
      l.generation = catalog_.pcie_generations().begin()->first;
      l.below_catalog = true;
    }
  }
  const int width = int_attr(n, "link_width", -1);
  if (width > 0) {
    int lanes = 1;
    while (lanes * 2 <= std::min(width, 32)) lanes *= 2;
    l.lanes = lanes;
  } else if (width == 0) {
    hidden_links_.insert(what);
  }
  if (l.below_catalog && !what.starts_with("switch")) {
    noted_["link_speed below the catalog's PCIe generations, written as the lowest (Gen" +
           std::to_string(*l.generation) + ")"]
        .push_back(what + " (line " + std::to_string(line_of(n)) + ")");
  }
  return l;
}

void Reader::add_switch(const pugi::xml_node& pci, const std::string& parent_name) {
  ImportedSwitch s;
  s.name = "sw" + std::to_string(d_.switches.size());
  s.parent = parent_name;
  s.comment = "busid " + shown(pci.attribute("busid").as_string());
  const Link l = link_of(pci, "switch " + s.name);
  const std::size_t at = d_.switches.size();
  d_.switches.push_back(s);
  walk(pci, s.name);
  // A link narrower than x4 above x8 devices is a VM's placeholder bridge, not a real uplink:
  // the devices' own links are what the host gives them.
  auto& sw = d_.switches[at];
  sw.generation = l.generation.value_or(4);
  sw.lanes = l.lanes.value_or(16);
  int child_lanes = 0, child_gen = 0;
  for (const auto& g : gpus_) {
    if (g.at.parent == sw.name) {
      child_lanes = std::max(child_lanes, g.at.lanes.value_or(16));
      child_gen = std::max(child_gen, g.at.generation.value_or(0));
    }
  }
  for (const auto& n : nics_) {
    if (n.at.parent == sw.name) {
      child_lanes = std::max(child_lanes, n.at.lanes.value_or(16));
      child_gen = std::max(child_gen, n.at.generation.value_or(0));
    }
  }
  if (sw.lanes < 4 && child_lanes >= 8) {
    noted_[fmt::format("a link of x{}{} above x{} devices, a VM's placeholder bridge: written as its devices' link",
                       sw.lanes, l.below_catalog ? " at 2.5 GT/s" : "", child_lanes)]
        .push_back(sw.name + " (line " + std::to_string(line_of(pci)) + ")");
    sw.lanes = child_lanes;
    if (child_gen) sw.generation = child_gen;
  } else if (l.below_catalog) {
    noted_["link_speed below the catalog's PCIe generations, written as the lowest (Gen" +
           std::to_string(sw.generation) + ")"]
        .push_back(sw.name + " (line " + std::to_string(line_of(pci)) + ")");
  }
  if (!l.generation) sw.comment += ", no link_speed: Gen4 written";
}

void Reader::add_gpu(const pugi::xml_node& pci, const pugi::xml_node& gpu, const std::string& parent_name) {
  Gpu g;
  g.busid = pci ? pci.attribute("busid").as_string() : "";
  g.at.parent = parent_name;
  if (pci) {
    const Link l = link_of(pci, "GPU " + shown(g.busid));
    g.at.generation = l.generation;
    g.at.lanes = l.lanes;
    if (pci.attribute("device")) g.device = hex_attr(pci, "device");
  }
  if (gpu) {
    g.described = true;
    g.dev = int_attr(gpu, "dev", -1);
    g.sm = int_attr(gpu, "sm", 0);
    for (const auto& nv : gpu.children("nvlink")) {
      NvlinkTo to;
      to.target = nv.attribute("target").as_string();
      to.count = int_attr(nv, "count", 0);
      if (to.count > 64) fail(nv, "count", fmt::format("{} NVLinks to one target", to.count), "0 to 64");
      to.tclass = nv.attribute("tclass") ? hex_attr(nv, "tclass") : 0;
      g.nvlinks.push_back(to);
    }
  }
  gpus_.push_back(g);
}

void Reader::add_nics(const pugi::xml_node& pci, const pugi::xml_node& nic, const std::string& parent_name) {
  Nic base;
  base.at.parent = parent_name;
  if (pci) {
    const unsigned cls = hex_attr(pci, "class");
    base.infiniband = (cls >> 8) == 0x0207;
    base.mellanox = std::string(pci.attribute("vendor").as_string()) == "0x15b3";
    base.link = link_of(pci, "NIC " + shown(pci.attribute("busid").as_string()));
    base.name = "busid " + shown(pci.attribute("busid").as_string());
  }
  bool any = false;
  if (nic) {
    for (const auto& net : nic.children("net")) {
      Nic n = base;
      n.name = shown(net.attribute("name").as_string());
      if (n.name.starts_with("mlx5")) n.mellanox = true;
      n.speed_Mbps = int_attr(net, "speed", 0);
      if (net.attribute("gdr")) n.gdr = int_attr(net, "gdr", 0) != 0;
      nics_.push_back(n);
      any = true;
    }
  }
  if (!any) nics_.push_back(base);
}

void Reader::walk(const pugi::xml_node& parent, const std::string& parent_name) {
  for (const auto& child : parent.children()) {
    const std::string tag = child.name();
    if (tag == "gpu") {
      add_gpu({}, child, parent_name);
    } else if (tag == "nic") {
      add_nics({}, child, parent_name);
    } else if (tag == "pci") {
      if (!child.attribute("class")) {
        // A partial file (NCCL merges it with what it detects) may list bare bus ids.
        if (child.first_child()) {
          walk(child, parent_name);
        } else {
          d_.notes.push_back(fmt::format("line {}: <pci busid=\"{}\"> has no class and nothing under it: skipped",
                                         line_of(child), child.attribute("busid").as_string()));
        }
        continue;
      }
      const unsigned cls = hex_attr(child, "class");
      const unsigned base = cls >> 16, sub = (cls >> 8) & 0xff;
      if (base == 0x06 && sub == 0x04) {
        add_switch(child, parent_name);
      } else if (base == 0x03 && (sub == 0x00 || sub == 0x02)) {
        add_gpu(child, child.child("gpu"), parent_name);
      } else if (base == 0x02 && (sub == 0x00 || sub == 0x07)) {
        add_nics(child, child.child("nic"), parent_name);
      } else {
        fail(child, "class", fmt::format("PCI class 0x{:06x} is not a device NCCL's topology holds", cls), kClasses);
      }
    }
  }
}

void Reader::read_cpu(const pugi::xml_node& cpu) {
  const std::string vendor = cpu.attribute("vendor").as_string();
  if (!d_.cpu.value.empty()) return;
  if (cpu.attribute("familyid") && cpu.attribute("modelid")) {
    const CpuId cid{vendor, int_attr(cpu, "familyid", 0), int_attr(cpu, "modelid", 0)};
    if (const auto known = id_.cpu_by_cpuid(cid)) {
      d_.cpu = {*known, fmt::format("CPUID {} family {} model {} names the generation, not the SKU: the catalog's "
                                    "part of it (--cpu MODEL for yours)",
                                    vendor, cid.family, cid.model)};
      return;
    }
    d_.cpu = {id_.cpu_default(vendor), fmt::format("CPUID {} family {} model {} is not in data/import/identify.yaml; "
                                                   "the vendor's default written (--cpu MODEL to choose)",
                                                   vendor, cid.family, cid.model)};
    return;
  }
  d_.cpu = {id_.cpu_default(vendor), "the file does not identify the CPU; default written (--cpu MODEL to choose)"};
}

void Reader::settle_gpus() {
  if (std::all_of(gpus_.begin(), gpus_.end(), [](const Gpu& g) { return g.dev >= 0; })) {
    std::stable_sort(gpus_.begin(), gpus_.end(), [](const Gpu& a, const Gpu& b) { return a.dev < b.dev; });
  }
  d_.gpus = static_cast<int>(gpus_.size());
  std::map<std::string, int> index_of;
  for (std::size_t i = 0; i < gpus_.size(); ++i) index_of[gpus_[i].busid] = static_cast<int>(i);
  std::set<std::string> switches;
  bool hidden_switch = false, any_described = false;
  int nvlinks = 0;
  std::map<std::pair<int, int>, int> edges;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const auto& g = gpus_[i];
    any_described = any_described || g.described;
    int total = 0;
    for (const auto& nv : g.nvlinks) {
      total += nv.count;
      const unsigned base = nv.tclass >> 16;
      const auto peer = index_of.find(nv.target);
      if (base == 0x03 && peer != index_of.end() && !nv.target.empty()) {
        const std::pair<int, int> key =
            std::minmax(static_cast<int>(i), peer->second);  // copied: minmax returns references
        edges[key] = std::max(edges[key], nv.count);
      } else if (nv.target.find_first_not_of("fF:.0") == std::string::npos) {
        hidden_switch = true;  // NCCL's "fffffff:ff:ff.0": NVLinks whose far end NVML cannot name
      } else {
        switches.insert(nv.target);
      }
    }
    nvlinks = std::max(nvlinks, total);
  }
  d_.gpu_parents.clear();
  for (const auto& g : gpus_) d_.gpu_parents.push_back(g.at);
  if (!switches.empty() || hidden_switch) {
    d_.gpu_fabric = GpuFabric::nvswitch;
    d_.nvswitch_count = static_cast<int>(switches.size());
  } else if (!edges.empty()) {
    d_.gpu_fabric = GpuFabric::nvlink_mesh;
    for (const auto& [k, links] : edges) d_.nvlink_mesh.push_back({k.first, k.second, links});
  }
  identify_gpu(nvlinks, any_described);
  const auto differs = [&](const Gpu& g) { return g.device != gpus_.front().device || g.sm != gpus_.front().sm; };
  if (std::any_of(gpus_.begin(), gpus_.end(), differs)) {
    d_.notes.push_back(
        "the file's GPUs are not all of one model (device id or sm differ): a cluster node has one "
        "GPU model, " +
        d_.gpu.value + " (the first GPU's) written for all");
  }
}

// The model: the PCI device id, else sm and the NVLink count, else a default.
void Reader::identify_gpu(int nvlinks, bool any_described) {
  const Gpu& first = gpus_.front();
  if (first.device != 0) {
    if (const auto by_id = id_.gpu_by_pci_device(first.device)) {
      d_.gpu = {*by_id, ""};
      return;
    }
  }
  if (first.sm > 0) {
    if (const auto by_sm = id_.gpu_by_sm(catalog_, first.sm, nvlinks)) {
      d_.gpu = {*by_sm,
                fmt::format("identified from sm {} and {} NVLinks per GPU (PCI device {}); --gpu MODEL "
                            "if the SKU differs",
                            first.sm, nvlinks,
                            first.device ? fmt::format("0x{:04x} not in data/import/identify.yaml", first.device)
                                         : std::string("id not in the file"))};
      return;
    }
  }
  if (!any_described) {
    d_.nvlink_unknown = true;
    d_.gpu = {id_.gpu_by_nvlinks(0),
              "the file names GPUs by PCI class only (no model, no NVLink): default written; --gpu MODEL "
              "(an NVLink GPU is put on NVSwitch)"};
    return;
  }
  d_.gpu = {id_.gpu_by_nvlinks(nvlinks), fmt::format("sm {} with {} NVLinks per GPU matches no catalog GPU: "
                                                     "default written; --gpu MODEL",
                                                     first.sm, nvlinks)};
}

void Reader::settle_nics() {
  std::string family;
  double rate_Gbps = 0;
  std::vector<std::string> gdr_off;
  bool gdr_known = false;
  for (const auto& n : nics_) {
    ImportedNic out;
    out.at = n.at;
    if (n.link.lanes) out.at.lanes = n.link.lanes;
    if (n.link.generation) out.at.generation = n.link.generation;
    out.comment = n.name;
    double Gbps = n.speed_Mbps / 1000.0;
    if (Gbps <= 0) {
      const Bandwidth by_link =
          id_.nic_rate_for_link(catalog_, n.link.generation.value_or(4), n.link.lanes.value_or(16));
      Gbps = in_Gbps(by_link);
      out.note = fmt::format(
          "speed not in the file: {:g} Gb/s, the fastest of the NIC ladder its PCIe Gen{} x{} "
          "link carries",
          Gbps, n.link.generation.value_or(4), n.link.lanes.value_or(16));
    }
    out.model = id_.nic_for_rate(catalog_, gbps(Gbps));
    const std::string fam = n.infiniband ? "infiniband" : (n.mellanox ? "roce" : "ethernet");
    if (family.empty()) family = fam;
    rate_Gbps = std::max(rate_Gbps, Gbps);
    if (n.gdr) {
      gdr_known = true;
      if (!*n.gdr) gdr_off.push_back(n.name);
    }
    d_.nics.push_back(out);
  }
  if (nics_.empty()) {
    d_.network = {id_.network_default(), "the file lists no NIC: default network written (--network TECH)"};
    return;
  }
  if (!gdr_off.empty()) {
    d_.gpudirect = false;
  } else if (!gdr_known) {
    d_.gpudirect_note = "the file does not say whether GPUDirect RDMA works (no gdr= on a <net>): true written";
  }
  if (const auto net = network_for(catalog_, family, gbps(rate_Gbps))) {
    d_.network = {*net, fmt::format("from the NICs ({}, {:g} Gb/s); the switches between nodes are not in the file",
                                    family, rate_Gbps)};
  } else {
    d_.network = {
        id_.network_default(),
        fmt::format("no catalog {} network at {:g} Gb/s: default written (--network TECH)", family, rate_Gbps)};
  }
}

void Reader::drop_empty_switches() {
  std::set<std::string> used;
  std::map<std::string, std::string> parent;
  for (const auto& s : d_.switches) parent[s.name] = s.parent;
  auto mark = [&](std::string p) {
    while (parent.count(p) && !used.count(p)) {
      used.insert(p);
      p = parent[p];
    }
  };
  for (const auto& g : d_.gpu_parents) mark(g.parent);
  for (const auto& n : d_.nics) mark(n.at.parent);
  std::erase_if(d_.switches, [&](const ImportedSwitch& s) { return !used.count(s.name); });
}

ImportedDesign Reader::read() {
  pugi::xml_document doc;
  const pugi::xml_parse_result r =
      doc.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!r) {
    throw InputError({file_, line_at(text_, r.offset), 0}, "", std::string("malformed XML: ") + r.description(),
                     "NCCL's topology XML as NCCL_TOPO_DUMP_FILE writes it");
  }
  const pugi::xml_node system = doc.child("system");
  if (!system) {
    throw InputError({file_, 1, 0}, "system", "no <system> element",
                     "NCCL's topology XML: <system version=\"1\"> with <cpu> elements");
  }
  int socket = 0;
  for (const auto& cpu : system.children("cpu")) {
    if (socket == 8) fail(cpu, "cpu", "more than 8 <cpu> elements (NUMA nodes)", "at most 8");
    read_cpu(cpu);
    walk(cpu, "cpu" + std::to_string(socket));
    ++socket;
  }
  if (gpus_.empty()) {
    fail(system, "gpu", "no GPUs in the file",
         "a <pci class=\"0x030200\"> (or 0x0300xx) device, or a <gpu> element, under a <cpu>");
  }
  d_.sockets = socket;
  d_.name = cluster_name_of(file_);
  d_.file = file_;
  d_.source = file_ + " (NCCL topology XML)";
  if (d_.cpu.value.empty()) d_.cpu = {id_.cpu_default(""), "the file does not identify the CPU"};
  settle_gpus();
  settle_nics();
  drop_empty_switches();
  d_.host_memory_GB = id_.host_memory_GB();
  d_.host_memory_note = "not in the file: default written";
  for (const auto& [what, where] : noted_) {
    d_.notes.push_back(fmt::format("{} on {}: {}",
                                   where.size() == 1 ? "one device" : std::to_string(where.size()) + " devices", what,
                                   join(where)));
  }
  if (!hidden_links_.empty()) {
    d_.notes.push_back(
        fmt::format("{} device(s) show link_width 0 (a VM hides the link): their own catalog link "
                    "is written, as NCCL takes 16 lanes",
                    hidden_links_.size()));
  }
  d_.description = fmt::format("{} GPUs, {} NICs on {} NUMA node(s), imported from NCCL topology XML", d_.gpus,
                               d_.nics.size(), d_.sockets);
  return d_;
}

}  // namespace

ImportedDesign read_nccl_topo(const std::string& text, const std::string& file, const hw::Catalog& catalog) {
  return Reader(text, file, catalog).read();
}

ImportedCluster import_nccl_topo(const std::string& text, const std::string& file, const hw::Catalog& catalog,
                                 const ImportOptions& options) {
  return finish(read_nccl_topo(text, file, catalog), options, catalog);
}

}  // namespace gf::topo::import
