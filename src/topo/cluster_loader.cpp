#include "topo/cluster_loader.hpp"

#include <algorithm>
#include <map>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::topo {

const char* to_string(GpuFabric f) { return name_of(kGpuFabricNames, f); }

const char* to_string(FabricKind f) { return name_of(kFabricKindNames, f); }

namespace {

constexpr long kMaxNodes = 1'000'000;  // the GPU-count limit is enforced when building

// The trained link of one attachment (lanes: 1, 2, 4, 8, 16, 32; generation as in the catalog).
void parse_link_width(const Fields& f, Attachment& a) {
  if (f.has("lanes")) {
    const int lanes = static_cast<int>(f.integer("lanes", 1, 32));
    if ((lanes & (lanes - 1)) != 0) f.fail("lanes", "got " + std::to_string(lanes), "1, 2, 4, 8, 16, 32");
    a.lanes = lanes;
  }
  if (f.has("generation")) a.generation = static_cast<int>(f.integer("generation", 1, 7));
}

Attachment parse_attachment(const YAML::Node& n, const std::string& file, const std::string& field) {
  Attachment a;
  a.where = location_of(n, file);
  if (n.IsScalar()) {
    a.parent = n.as<std::string>();
    return a;
  }
  const Fields f(n, file, field, {"parent", "host_bridge", "lanes", "generation"});
  a.parent = f.text("parent");
  if (f.has("host_bridge")) a.host_bridge = static_cast<int>(f.integer("host_bridge", 0, 1023));
  parse_link_width(f, a);
  return a;
}

// A list of {model, parent, host_bridge, count}; `check_model` rejects unknown models.
template <typename CheckModel>
std::vector<DevicePlacement> parse_placements(const Fields& f, const char* key, CheckModel check_model) {
  std::vector<DevicePlacement> out;
  if (!f.has(key)) return out;
  std::size_t i = 0;
  for (const auto& item : as_list(f.node(key), f.file(), f.field(key))) {
    const Fields pf(item, f.file(), f.field(key) + "[" + std::to_string(i++) + "]",
                    {"model", "parent", "host_bridge", "count", "lanes", "generation"});
    DevicePlacement p;
    p.model = pf.text("model");
    check_model(p.model, pf.where("model"), pf.field("model"));
    p.at.parent = pf.text("parent");
    p.at.where = pf.where("parent");
    if (pf.has("host_bridge")) p.at.host_bridge = static_cast<int>(pf.integer("host_bridge", 0, 1023));
    p.count = static_cast<int>(pf.integer_or("count", 1, 64, 1));
    parse_link_width(pf, p.at);
    out.push_back(p);
  }
  return out;
}

NodeDesign parse_node(const Fields& f, const hw::Catalog& catalog) {
  NodeDesign n;
  const std::string file = f.file();
  n.gpu = f.text("gpu");
  n.gpu_where = f.where("gpu");
  catalog.gpu(n.gpu, n.gpu_where, f.field("gpu"));
  n.gpus = static_cast<int>(f.integer("gpus", 1, 72));
  n.cpu = f.text("cpu");
  n.cpu_where = f.where("cpu");
  catalog.cpu(n.cpu, n.cpu_where, f.field("cpu"));
  n.sockets = static_cast<int>(f.integer_or("sockets", 1, 8, 1));
  n.host_memory = Bytes(f.physical("host_memory_GB", 1e9, physical::size));
  n.gpu_fabric = f.choice("gpu_fabric", kGpuFabricNames);
  const auto& gpu = catalog.gpu(n.gpu);
  if (n.gpu_fabric != GpuFabric::pcie && !gpu.nvlink) {
    f.fail("gpu_fabric", "GPU '" + n.gpu + "' has no NVLink", "pcie");
  }
  if (n.gpu_fabric == GpuFabric::nvswitch) {
    const Fields sf(f.node("nvswitch"), file, f.field("nvswitch"), {"generation", "count"});
    n.nvswitch_generation = static_cast<int>(sf.integer("generation", 1, 16));
    n.nvswitch_count = static_cast<int>(sf.integer("count", 1, 64));
    n.nvswitch_where = sf.where("generation");
    catalog.nvswitch(n.nvswitch_generation, n.nvswitch_where, sf.field("generation"));
  } else if (f.has("nvswitch")) {
    f.fail("nvswitch", "only valid with gpu_fabric: nvswitch");
  }
  if (n.gpu_fabric == GpuFabric::nvlink_mesh) {
    std::size_t i = 0;
    for (const auto& e : as_list(f.node("nvlink_mesh"), file, f.field("nvlink_mesh"))) {
      const std::string field = f.field("nvlink_mesh") + "[" + std::to_string(i++) + "]";
      const Fields ef(e, file, field, {"gpus", "links"});
      const auto pair = as_list(ef.node("gpus"), file, ef.field("gpus"));
      NvlinkEdge edge;
      edge.where = ef.where();
      if (pair.size() != 2) ef.fail("gpus", "expected two GPU indices", "[a, b]");
      for (int k = 0; k < 2; ++k) {
        int v = -1;
        if (!pair[static_cast<std::size_t>(k)].IsScalar() ||
            !YAML::convert<int>::decode(pair[static_cast<std::size_t>(k)], v) || v < 0 || v >= n.gpus) {
          ef.fail("gpus", "GPU index out of range", "0.." + std::to_string(n.gpus - 1));
        }
        (k == 0 ? edge.a : edge.b) = v;
      }
      if (edge.a == edge.b) ef.fail("gpus", "an NVLink joins two different GPUs");
      edge.links = static_cast<int>(ef.integer("links", 1, 18));
      n.nvlink_mesh.push_back(edge);
    }
  } else if (f.has("nvlink_mesh")) {
    f.fail("nvlink_mesh", "only valid with gpu_fabric: nvlink-mesh");
  }
  if (f.has("pcie_switches")) {
    std::size_t i = 0;
    for (const auto& s : as_list(f.node("pcie_switches"), file, f.field("pcie_switches"))) {
      const Fields sf(s, file, f.field("pcie_switches") + "[" + std::to_string(i++) + "]",
                      {"name", "parent", "generation", "lanes", "host_bridge"});
      PcieSwitchSpec p;
      p.name = sf.text("name");
      p.parent = sf.text("parent");
      p.generation = static_cast<int>(sf.integer("generation", 1, 7));
      catalog.pcie(p.generation, sf.where("generation"), sf.field("generation"));
      p.lanes = static_cast<int>(sf.integer_or("lanes", 1, 64, 16));
      if (sf.has("host_bridge")) p.host_bridge = static_cast<int>(sf.integer("host_bridge", 0, 1023));
      p.where = sf.where("parent");
      n.pcie_switches.push_back(p);
    }
  }
  {
    const auto parents = as_list(f.node("gpu_parents"), file, f.field("gpu_parents"));
    if (static_cast<int>(parents.size()) != n.gpus) {
      f.fail("gpu_parents",
             "lists " + std::to_string(parents.size()) + " parents for " + std::to_string(n.gpus) + " GPUs",
             "one parent per GPU");
    }
    for (std::size_t i = 0; i < parents.size(); ++i) {
      n.gpu_parents.push_back(
          parse_attachment(parents[i], file, f.field("gpu_parents") + "[" + std::to_string(i) + "]"));
    }
  }
  n.nics = parse_placements(f, "nics", [&](const std::string& m, const SourceLocation& w, const std::string& fld) {
    catalog.nic(m, w, fld);
  });
  n.storage = parse_placements(
      f, "storage",
      [&](const std::string& m, const SourceLocation& w, const std::string& fld) { catalog.storage(m, w, fld); });
  return n;
}

NetworkDesign parse_network(const Fields& f, const hw::Catalog& catalog) {
  NetworkDesign n;
  n.tech = f.text("tech");
  n.tech_where = f.where("tech");
  catalog.network(n.tech, n.tech_where, f.field("tech"));
  if (f.has("fabric")) {
    n.fabric = f.choice("fabric", kFabricKindNames);
    n.fabric_from = {f.where("fabric"), f.field("fabric")};
  }
  if (f.has("tiers")) {
    n.tiers = static_cast<int>(f.integer("tiers", 2, 3));
    n.tiers_from = {f.where("tiers"), f.field("tiers")};
  }
  if (f.has("oversubscription")) {
    n.oversubscription = f.number("oversubscription");
    if (!(n.oversubscription >= 1.0) || n.oversubscription > 64) {
      f.fail("oversubscription", "must be a ratio from 1 to 64 (down:up ports at the leaf)", "1 <= R <= 64");
    }
    n.oversubscription_from = {f.where("oversubscription"), f.field("oversubscription")};
  }
  if (f.has("switch")) {
    n.switch_model = f.text("switch");
    n.switch_where = f.where("switch");
    catalog.network_switch(n.switch_model, n.switch_where, f.field("switch"));
  }
  return n;
}

}  // namespace

ClusterSpec parse_cluster(const std::string& text, const std::string& file, const hw::Catalog& catalog) {
  const YAML::Node root = parse_yaml(text, file);
  if (!root || root.IsNull()) throw InputError({file, 1, 1}, "", "empty cluster file");
  const Fields f(
      root, file, "",
      {"name", "description", "source", "nodes", "gpudirect", "p2p", "p2p_patched_driver", "node", "network"});
  ClusterSpec c;
  c.file = file;
  c.name = f.text("name");
  c.description = f.text_or("description", "");
  c.source = f.text_or("source", "");
  c.nodes = f.integer_or("nodes", 1, kMaxNodes, 1);
  if (f.has("nodes")) c.nodes_from = {f.where("nodes"), f.field("nodes")};
  c.gpudirect = f.flag_or("gpudirect", true);
  c.p2p = f.flag_or("p2p", true);
  c.p2p_patched_driver = f.flag_or("p2p_patched_driver", false);
  const Fields nf(f.node("node"), file, "node",
                  {"gpu", "gpus", "cpu", "sockets", "host_memory_GB", "gpu_fabric", "nvswitch", "nvlink_mesh",
                   "pcie_switches", "gpu_parents", "nics", "storage"});
  c.node = parse_node(nf, catalog);
  if (f.has("network")) {
    const Fields wf(f.node("network"), file, "network", {"tech", "fabric", "tiers", "oversubscription", "switch"});
    c.network = parse_network(wf, catalog);
  } else {
    // Single node default: the first NIC's fastest family at its maximum rate is not knowable
    // without a table of rates per family, so fall back to the first network the NIC can run.
    if (c.node.nics.empty()) {
      f.fail("network", "required when the node has no NICs", "a network block with tech:");
    }
    const auto& nic = catalog.nic(c.node.nics.front().model);
    std::string best;
    double best_rate = 0;
    for (const auto& [name, net] : catalog.networks()) {
      for (const auto& fam : nic.families) {
        if (fam == net.family && net.data_rate <= nic.max_rate && net.data_rate.value() > best_rate) {
          best = name;
          best_rate = net.data_rate.value();
        }
      }
    }
    if (best.empty()) f.fail("network", "no catalog network matches NIC '" + nic.name + "'");
    c.network.tech = best;
  }
  return c;
}

ClusterSpec load_cluster_file(const std::string& path, const hw::Catalog& catalog, const std::string& field) {
  return parse_cluster(read_text_file(path, field), path, catalog);
}

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto& f : data::files_under("data/presets/", ".yaml")) {
    std::string name(f.path.substr(13));
    out.push_back(name.substr(0, name.size() - 5));
  }
  return out;
}

ClusterSpec load_preset(const std::string& name, const hw::Catalog& catalog) {
  const std::string path = "data/presets/" + name + ".yaml";
  if (const auto text = data::find(path)) return parse_cluster(std::string(*text), "builtin:" + path, catalog);
  const auto names = preset_names();
  const std::string hint = suggest(name, names);
  throw InputError({}, "--preset",
                   "unknown preset '" + name + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
                   join(names));
}

namespace {

bool runs(const hw::NicSpec& nic, const hw::NetworkTech& net) {
  return std::find(nic.families.begin(), nic.families.end(), net.family) != nic.families.end();
}

std::string gbps(Bandwidth b) {
  const double v = in_Gbps(b);
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s + " Gb/s";
}

// 0..n-1 in bit-reversed order (0, 4, 2, 6, 1, 5, 3, 7 for eight): every prefix is spread
// as evenly over the range as it can be.
std::vector<std::size_t> spread_order(std::size_t n) {
  int bits = 0;
  while ((std::size_t{1} << bits) < n) ++bits;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < (std::size_t{1} << bits); ++i) {
    std::size_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1u) << (bits - 1 - b);
    if (r < n) out.push_back(r);
  }
  return out;
}

// The NIC slots of a design, one per NIC, in the order a vendor fills them: round-robin over
// the sockets, then within a socket over its PCIe switches (at every level of the tree), so
// that the first N are spread as evenly as the tree allows. Returns indices into `singles`.
std::vector<std::size_t> vendor_order(const NodeDesign& n, const std::vector<DevicePlacement>& singles) {
  std::map<std::string, std::string> parent_of;
  for (const auto& sw : n.pcie_switches) parent_of[sw.name] = sw.parent;
  // Each slot's path from the socket down to its parent: ["cpu1", "sw2", "sw2n0"].
  struct Tree {
    std::map<std::string, Tree> children;  // by name; std::map keeps the order deterministic
    std::vector<std::string> child_order;  // in the order the design first lists them
    std::vector<std::size_t> slots;
  };
  Tree root;
  for (std::size_t i = 0; i < singles.size(); ++i) {
    std::vector<std::string> path{singles[i].at.parent};
    for (std::size_t guard = 0; guard <= n.pcie_switches.size(); ++guard) {
      const auto it = parent_of.find(path.back());
      if (it == parent_of.end()) break;
      path.push_back(it->second);
    }
    Tree* t = &root;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      if (!t->children.count(*it)) t->child_order.push_back(*it);
      t = &t->children[*it];
    }
    t->slots.push_back(i);
  }
  // Round-robin merge: one from each child in turn, recursively. The children take their turns
  // in bit-reversed order (0, 2, 1, 3 of four), so that the first few are spread evenly over
  // the tree (two NICs of a socket with four switches go to the first and the third).
  auto order = [](const auto& self, const Tree& t) -> std::vector<std::size_t> {
    std::vector<std::vector<std::size_t>> parts;
    if (!t.slots.empty()) parts.push_back(t.slots);
    for (const auto i : spread_order(t.child_order.size())) {
      parts.push_back(self(self, t.children.at(t.child_order[i])));
    }
    std::vector<std::size_t> out;
    for (std::size_t k = 0;; ++k) {
      bool any = false;
      for (const auto& p : parts) {
        if (k < p.size()) {
          out.push_back(p[k]);
          any = true;
        }
      }
      if (!any) break;
    }
    return out;
  };
  // Slots directly under one parent are a single group: take them one at a time across parents.
  return order(order, root);
}

void set_nics_per_node(ClusterSpec& spec, int count) {
  std::vector<DevicePlacement> singles;
  for (const auto& n : spec.node.nics) {
    for (int i = 0; i < n.count; ++i) {
      DevicePlacement one = n;
      one.count = 1;
      singles.push_back(one);
    }
  }
  const int slots = static_cast<int>(singles.size());
  if (count == slots) return;
  const auto order = vendor_order(spec.node, singles);
  std::vector<std::size_t> chosen;
  for (int i = 0; i < count; ++i) chosen.push_back(order[static_cast<std::size_t>(i) % order.size()]);
  std::stable_sort(chosen.begin(), chosen.end());  // NIC numbering follows the design's order
  std::vector<DevicePlacement> out;
  std::vector<std::string> parents;
  for (const auto i : chosen) {
    out.push_back(singles[i]);
    if (std::find(parents.begin(), parents.end(), singles[i].at.parent) == parents.end()) {
      parents.push_back(singles[i].at.parent);
    }
  }
  spec.node.nics = out;
  if (count < slots) {
    spec.notes.push_back("--nics-per-node " + std::to_string(count) + ": " + std::to_string(count) +
                         " of the design's " + std::to_string(slots) +
                         " NIC slots, spread over sockets and PCIe switches (under " + join(parents) + ")");
  } else if (count > 0) {
    spec.notes.push_back("warning: --nics-per-node " + std::to_string(count) + ": the design has " +
                         std::to_string(slots) + " NIC slots, so NICs share them (" +
                         std::to_string((count + slots - 1) / slots) + " per slot at most, under " + join(parents) +
                         ")");
  }
}

}  // namespace

void apply_overrides(ClusterSpec& spec, const ClusterOverrides& o, const hw::Catalog& catalog) {
  if (o.nodes) {
    if (*o.nodes < 1 || *o.nodes > kMaxNodes) {
      throw InputError({}, "--nodes", "got " + std::to_string(*o.nodes), "1 to " + std::to_string(kMaxNodes));
    }
    spec.nodes = *o.nodes;
    spec.nodes_from = flag_origin("--nodes");
  }
  if (o.gpu) {
    const auto& now = catalog.gpu(spec.node.gpu);
    const auto& want = catalog.gpu(*o.gpu, {}, "--gpu");
    // An NVSwitch or NVLink-mesh design wires a fixed number of ports per GPU of one generation:
    // only a GPU with the same ports fits it (an H100 SXM5 for an H200 SXM, an A100 40GB for an
    // 80GB). A PCIe design takes any GPU.
    if (spec.node.gpu_fabric != GpuFabric::pcie) {
      const bool same_ports = want.nvlink && now.nvlink && want.nvlink->generation == now.nvlink->generation &&
                              want.nvlink->links == now.nvlink->links;
      if (!same_ports) {
        auto ports = [](const hw::GpuSpec& g) {
          return g.nvlink
                     ? std::to_string(g.nvlink->links) + " NVLink " + std::to_string(g.nvlink->generation) + " links"
                     : std::string("no NVLink");
        };
        throw InputError({}, "--gpu",
                         "GPU '" + want.name + "' has " + ports(want) + "; the node design wires " + ports(now) +
                             " per GPU (" + now.name + ")",
                         "a GPU with " + ports(now) + ", or a cluster file whose node design fits " + want.name);
      }
    }
    if (want.name != now.name) {
      spec.notes.push_back("--gpu " + want.name + ": replaces " + now.name + " in every GPU slot");
      spec.node.gpu = want.name;
      spec.node.gpu_where = {};
    }
  }
  const hw::NicSpec* forced_nic = o.nic ? &catalog.nic(*o.nic, {}, "--nic") : nullptr;
  if (o.network) {
    const auto& net = catalog.network(*o.network, {}, "--network");
    spec.network.tech = net.name;
    spec.network.tech_where = {};
    if (!spec.network.switch_model.empty() && spec.network.switch_model != net.default_switch) {
      spec.notes.push_back("--network " + net.name + ": switch " + spec.network.switch_model + " replaced by " +
                           net.default_switch + ", the network's default switch");
    }
    spec.network.switch_model.clear();  // the file's switch was chosen for its own network
    // Each network implies a NIC. A NIC that runs the network's family at its rate or faster is
    // kept (a faster one runs at the network's rate); any other becomes the implied NIC.
    if (!forced_nic) {
      std::vector<std::string> swapped, capped;
      for (auto& nic : spec.node.nics) {
        const auto& have = catalog.nic(nic.model);
        const std::string was = have.name + " (" + gbps(have.max_rate) + ")";
        if (!runs(have, net) || have.max_rate < net.data_rate) {
          if (std::find(swapped.begin(), swapped.end(), was) == swapped.end()) swapped.push_back(was);
          nic.model = net.default_nic;
        } else if (have.max_rate > net.data_rate) {
          if (std::find(capped.begin(), capped.end(), was) == capped.end()) capped.push_back(was);
        }
      }
      const auto& implied = catalog.nic(net.default_nic);
      if (!swapped.empty()) {
        spec.notes.push_back("warning: --network " + net.name + ": NIC " + join(swapped) + " replaced by " +
                             implied.name + " (" + gbps(implied.max_rate) + "), the NIC " + net.name +
                             " implies; --nic MODEL to choose another");
      }
      if (!capped.empty()) {
        spec.notes.push_back("warning: --network " + net.name + ": NIC " + join(capped) + " kept, running at " +
                             gbps(net.data_rate) + "; --nic " + implied.name + " for the NIC " + net.name + " implies");
      }
    }
    if (!o.nics_per_node) {
      int count = 0;
      for (const auto& n : spec.node.nics) count += n.count;
      spec.notes.push_back("--network " + net.name + " keeps the design's " + std::to_string(count) + " NIC" +
                           (count == 1 ? "" : "s") +
                           " per node (a network override keeps the NIC count; --nics-per-node N changes it)");
    }
    if (spec.nodes == 1) {
      spec.notes.push_back("warning: --network " + net.name + " has no effect on one node (--nodes N to network " +
                           "several)");
    }
  }
  if (forced_nic) {
    const auto& nic = *forced_nic;
    const auto& net = catalog.network(spec.network.tech, spec.network.tech_where, "network.tech");
    if (!runs(nic, net)) {
      throw InputError({}, "--nic", "NIC '" + nic.name + "' cannot run network '" + net.name + "' (" + net.family + ")",
                       "a NIC whose families include " + net.family + ", e.g. " + net.default_nic);
    }
    if (spec.node.nics.empty()) {
      throw InputError({}, "--nic", "the node design lists no NIC slots to fill", "a cluster file with a nics: list");
    }
    for (auto& n : spec.node.nics) n.model = nic.name;
    if (nic.max_rate > net.data_rate) {
      spec.notes.push_back("warning: --nic " + nic.name + " (" + gbps(nic.max_rate) + ") runs at " +
                           gbps(net.data_rate) + ", the rate of network " + net.name);
    } else if (nic.max_rate < net.data_rate) {
      spec.notes.push_back("warning: network " + net.name + " (" + gbps(net.data_rate) + ") runs at " +
                           gbps(nic.max_rate) + ", the rate of --nic " + nic.name);
    }
  }
  if (o.nics_per_node) {
    if (*o.nics_per_node < 0 || *o.nics_per_node > 64) {
      throw InputError({}, "--nics-per-node", "got " + std::to_string(*o.nics_per_node), "0 to 64");
    }
    if (spec.node.nics.empty() && *o.nics_per_node > 0) {
      throw InputError({}, "--nics-per-node", "the node design lists no NIC slots to fill",
                       "a cluster file with a nics: list");
    }
    set_nics_per_node(spec, *o.nics_per_node);
  }
  if (o.fabric) {
    spec.network.fabric = *o.fabric;
    spec.network.fabric_from = flag_origin("--fabric");
  }
  if (o.tiers) {
    if (*o.tiers != 2 && *o.tiers != 3) throw InputError({}, "--tiers", "got " + std::to_string(*o.tiers), "2, 3");
    spec.network.tiers = *o.tiers;
    spec.network.tiers_from = flag_origin("--tiers");
  }
  if (o.oversubscription) {
    if (!(*o.oversubscription >= 1.0) || *o.oversubscription > 64) {
      throw InputError({}, "--oversubscription", "must be a ratio from 1 to 64", "1 <= R <= 64");
    }
    spec.network.oversubscription = *o.oversubscription;
    spec.network.oversubscription_from = flag_origin("--oversubscription");
  }
  if (o.gpudirect) {
    spec.gpudirect = *o.gpudirect;
    const auto& net = catalog.network(spec.network.tech);
    if (*o.gpudirect && net.transport == "tcp") {
      spec.notes.push_back("warning: --gpudirect on is ignored: network " + net.name +
                           " runs over TCP sockets, so data bounces through host memory");
    }
  }
  if (o.p2p) {
    const auto& gpu = catalog.gpu(spec.node.gpu);
    const bool driver_allows = gpu.p2p_supported || spec.p2p_patched_driver;
    // The spec keeps what the driver gives, so the layers above (the communicator's transport
    // choice) see P2P off and need not say it again.
    spec.p2p = *o.p2p && driver_allows;
    if (*o.p2p && !driver_allows) {
      spec.notes.push_back("warning: --p2p on is ignored: the driver refuses PCIe peer-to-peer on " + gpu.name +
                           ", so copies between its GPUs stage through host memory");
    }
  }
}

}  // namespace gf::topo
