#include "topo/import/topo_matrix_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <sstream>

#include "topo/import/identify.hpp"
#include "topo/import/source_text.hpp"

namespace gf::topo::import {

namespace {

constexpr std::size_t kMaxDevices = 256;  // a node holds at most 72 GPUs (cluster format) and their NICs
constexpr const char* kEntries = "X, NV# (e.g. NV12), PIX, PXB, PHB, NODE, SYS (SOC in old drivers)";

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool is_gpu(const std::string& name) { return name.size() > 3 && name.starts_with("GPU") && std::isdigit(name[3]); }

// Disjoint sets over the devices, joined where the relation between two is one of `kinds`.
struct Groups {
  std::vector<int> parent;
  explicit Groups(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    return parent[static_cast<std::size_t>(x)] == x
               ? x
               : parent[static_cast<std::size_t>(x)] = find(parent[static_cast<std::size_t>(x)]);
  }
  void join(int a, int b) { parent[static_cast<std::size_t>(find(a))] = find(b); }
};

struct Matrix {
  std::vector<std::string> names;             // header order: GPUs and NICs
  std::vector<std::vector<std::string>> rel;  // [i][j]
  std::vector<std::string> numa;              // per device, "" where not given
  std::vector<int> line;                      // of each row
  std::map<std::string, std::string> nic_legend;
};

// One row of the matrix: its entries (each from the legend, X exactly on the diagonal) and, for a
// GPU, its NUMA Affinity column.
void read_row(Matrix& m, std::size_t i, const std::vector<std::string>& t, const std::string& file, int lineno) {
  const std::size_t n = m.names.size();
  if (t.size() < n + 1) {
    throw InputError({file, lineno, 0}, m.names[i],
                     fmt::format("row {} has {} entries for the header's {} devices", m.names[i], t.size() - 1, n),
                     "one entry per column of the header (" + join(m.names, " ") + ")");
  }
  for (std::size_t j = 0; j < n; ++j) {
    std::string e = t[j + 1];
    if (e == "SOC") e = "SYS";
    const bool nv = e.size() > 2 && e.starts_with("NV") &&
                    std::all_of(e.begin() + 2, e.end(), [](unsigned char c) { return std::isdigit(c); }) &&
                    e.size() < 6;
    const bool ok = nv || e == "X" || e == "PIX" || e == "PXB" || e == "PHB" || e == "NODE" || e == "SYS";
    if (!ok) {
      throw InputError({file, lineno, 0}, m.names[i] + "/" + m.names[j],
                       "entry '" + shown(t[j + 1]) + "' is not in the legend", kEntries);
    }
    if ((e == "X") != (i == j)) {
      throw InputError({file, lineno, 0}, m.names[i] + "/" + m.names[j],
                       i == j ? "the diagonal entry must be X" : "X off the diagonal", kEntries);
    }
    m.rel[i][j] = e;
  }
  if (is_gpu(m.names[i])) {
    if (t.size() > n + 2) {
      const std::string& numa = t[n + 2];
      // A node number, or a list or range of them on GPUs close to several ("0-1", "0,1").
      const auto numa_char = [](unsigned char c) { return std::isdigit(c) || c == ',' || c == '-'; };
      if (numa != "N/A" && !std::all_of(numa.begin(), numa.end(), numa_char)) {
        throw InputError({file, lineno, 0}, m.names[i] + " NUMA Affinity", "'" + shown(numa) + "' is not a NUMA node",
                         "a NUMA node number (or list) or N/A");
      }
      if (numa != "N/A") m.numa[i] = numa;
    }
  } else if (t.size() > n + 1) {
    throw InputError({file, lineno, 0}, m.names[i],
                     fmt::format("row {} has {} entries for the header's {} devices", m.names[i], t.size() - 1, n),
                     "one entry per column of the header (" + join(m.names, " ") + ")");
  }
}

Matrix parse(const std::string& text, const std::string& file) {
  Matrix m;
  std::istringstream in(text);
  std::string raw;
  int lineno = 0, header_line = 0;
  std::size_t rows = 0;
  std::vector<bool> seen;
  bool in_nic_legend = false;
  while (std::getline(in, raw)) {
    ++lineno;
    const auto t = tokens(raw);
    if (t.empty()) continue;
    if (header_line == 0) {
      if (t.front() != "GPU0") continue;
      header_line = lineno;
      for (const auto& tok : t) {
        if (tok == "CPU" || tok == "NUMA" || tok == "GPU") break;
        m.names.push_back(shown(tok));
      }
      if (m.names.size() > kMaxDevices) {
        throw InputError({file, lineno, 0}, "GPU0", fmt::format("{} devices in the header", m.names.size()),
                         fmt::format("at most {} GPUs and NICs", kMaxDevices));
      }
      const std::size_t n = m.names.size();
      m.rel.assign(n, std::vector<std::string>(n));
      m.numa.assign(n, "");
      m.line.assign(n, 0);
      seen.assign(n, false);
      continue;
    }
    if (t.front() == "NIC" && t.size() > 1 && t[1] == "Legend:") {
      in_nic_legend = true;
      continue;
    }
    if (in_nic_legend && t.size() == 2 && t[0].back() == ':') {
      m.nic_legend[shown(t[0].substr(0, t[0].size() - 1))] = shown(t[1]);
      continue;
    }
    if (rows == m.names.size()) continue;  // the legend and whatever follows the matrix
    const auto it = std::find(m.names.begin(), m.names.end(), shown(t.front()));
    if (it == m.names.end()) {
      if (t.front() == "Legend:") break;
      continue;
    }
    const auto i = static_cast<std::size_t>(it - m.names.begin());
    if (seen[i])
      throw InputError({file, lineno, 0}, m.names[i], "a second row for " + m.names[i], "one row per device");
    read_row(m, i, t, file, lineno);
    m.line[i] = lineno;
    seen[i] = true;
    ++rows;
  }
  if (header_line == 0) {
    throw InputError({file, lineno, 0}, "GPU0", "no matrix header (a line starting with GPU0)",
                     "the text `nvidia-smi topo -m` prints");
  }
  for (std::size_t i = 0; i < m.names.size(); ++i) {
    if (!seen[i]) {
      throw InputError({file, lineno, 0}, m.names[i], "the matrix is truncated: no row for " + m.names[i],
                       "a row for every device in the header");
    }
  }
  return m;
}

int nv_count(const std::string& e) { return e.starts_with("NV") ? std::stoi(e.substr(2)) : 0; }

class Builder {
public:
  Builder(const Matrix& m, const std::string& file, const hw::Catalog& catalog)
      : m_(m), file_(file), catalog_(catalog), id_(Identify::builtin()), n_(m.names.size()) {}
  ImportedDesign build();

private:
  const Matrix& m_;
  const std::string& file_;
  const hw::Catalog& catalog_;
  const Identify& id_;
  std::size_t n_;
  ImportedDesign d_;
  std::vector<ImportedAttachment> at_;  // per device

  Groups groups_of(std::initializer_list<const char*> kinds) const {
    Groups g(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      for (std::size_t j = 0; j < n_; ++j) {
        for (const char* k : kinds) {
          if (m_.rel[i][j] == k) g.join(static_cast<int>(i), static_cast<int>(j));
        }
      }
    }
    return g;
  }
  Groups sockets();
  void place_pcie();
  void settle_nvlink();
};

// Sockets: devices not SYS apart, and GPUs of one NUMA node. A GPU whose every entry is NV# or X
// and that has no NUMA node tells nothing of its PCIe place: it goes to socket 0, with a note.
Groups Builder::sockets() {
  Groups socket = groups_of({"PIX", "PXB", "PHB", "NODE"});
  std::map<std::string, int> numa_first;
  for (std::size_t i = 0; i < n_; ++i) {
    if (m_.numa[i].empty()) continue;
    const auto [it, fresh] = numa_first.emplace(m_.numa[i], static_cast<int>(i));
    if (!fresh) socket.join(static_cast<int>(i), it->second);
  }
  bool unplaced_note = false;
  for (std::size_t i = 0; i < n_; ++i) {
    bool alone = true;
    for (std::size_t j = 0; j < n_; ++j)
      alone = alone && (socket.find(static_cast<int>(j)) != socket.find(static_cast<int>(i)) || i == j);
    if (alone && is_gpu(m_.names[i]) && m_.numa[i].empty() && i != 0) {
      socket.join(static_cast<int>(i), 0);
      unplaced_note = true;
    }
  }
  if (unplaced_note) {
    d_.notes.push_back("GPUs with only NV# entries and no NUMA Affinity are placed on socket 0");
  }
  return socket;
}

// Within a socket (sockets() above), a host bridge
// holds the devices PHB or closer; a switch tree the devices PXB or closer; a switch the
// devices PIX apart. Each tree becomes a switch on a root port (with a second level when it
// holds several PIX groups, so those are PXB apart), and each lone device a root port.
void Builder::place_pcie() {
  Groups socket = sockets();
  Groups bridge = groups_of({"PIX", "PXB", "PHB"});
  Groups tree = groups_of({"PIX", "PXB"});
  Groups pix = groups_of({"PIX"});
  std::map<int, int> socket_index, bridge_index, tree_switch, pix_switch;
  std::map<int, int> tree_pix_groups;  // tree root -> distinct PIX groups in it
  std::map<int, int> tree_size;
  {
    std::map<int, std::vector<int>> pix_in_tree;
    for (std::size_t i = 0; i < n_; ++i) {
      const int t = tree.find(static_cast<int>(i));
      ++tree_size[t];
      auto& v = pix_in_tree[t];
      const int p = pix.find(static_cast<int>(i));
      if (std::find(v.begin(), v.end(), p) == v.end()) v.push_back(p);
    }
    for (const auto& [t, v] : pix_in_tree) tree_pix_groups[t] = static_cast<int>(v.size());
  }
  at_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) {
    const int s = socket.find(static_cast<int>(i));
    if (!socket_index.count(s)) socket_index.emplace(s, static_cast<int>(socket_index.size()));
    const int b = bridge.find(static_cast<int>(i));
    if (!bridge_index.count(b)) bridge_index.emplace(b, static_cast<int>(bridge_index.size()));
    const std::string cpu = "cpu" + std::to_string(socket_index.at(s));
    const int t = tree.find(static_cast<int>(i));
    if (tree_size[t] == 1) {
      at_[i] = {cpu, bridge_index.at(b), std::nullopt, std::nullopt};
      continue;
    }
    if (!tree_switch.count(t)) {
      tree_switch[t] = static_cast<int>(d_.switches.size());
      ImportedSwitch sw;
      sw.name = "sw" + std::to_string(d_.switches.size());
      sw.parent = cpu;
      sw.host_bridge = bridge_index.at(b);
      sw.comment = "devices PXB or closer";
      d_.switches.push_back(sw);
    }
    const std::string top = d_.switches[static_cast<std::size_t>(tree_switch[t])].name;
    if (tree_pix_groups[t] == 1) {
      at_[i] = {top, std::nullopt, std::nullopt, std::nullopt};
      continue;
    }
    const int p = pix.find(static_cast<int>(i));
    if (!pix_switch.count(p)) {
      pix_switch[p] = static_cast<int>(d_.switches.size());
      ImportedSwitch sw;
      sw.name = top + "p" + std::to_string(pix_switch.size());
      sw.parent = top;
      sw.comment = "devices PIX apart";
      d_.switches.push_back(sw);
    }
    at_[i] = {d_.switches[static_cast<std::size_t>(pix_switch[p])].name, std::nullopt, std::nullopt, std::nullopt};
  }
  d_.sockets = std::max<int>(1, static_cast<int>(socket_index.size()));
  if (d_.sockets > 8) {
    throw InputError({file_, m_.line[0], 0}, "NUMA Affinity", fmt::format("{} sockets implied", d_.sockets),
                     "at most 8");
  }
}

void Builder::settle_nvlink() {
  int max_pair = 0, max_sum = 0;
  bool all_pairs = true;
  std::vector<std::size_t> gpus;
  for (std::size_t i = 0; i < n_; ++i) {
    if (is_gpu(m_.names[i])) gpus.push_back(i);
  }
  for (const auto i : gpus) {
    int sum = 0;
    for (const auto j : gpus) {
      if (i == j) continue;
      const int c = nv_count(m_.rel[i][j]);
      all_pairs = all_pairs && c > 0;
      sum += c;
      max_pair = std::max(max_pair, c);
    }
    max_sum = std::max(max_sum, sum);
  }
  int catalog_max = 0;
  for (const auto& [name, g] : catalog_.gpus()) catalog_max = std::max(catalog_max, g.nvlink ? g.nvlink->links : 0);
  if (max_pair == 0) {
    d_.gpu = {id_.gpu_by_nvlinks(0), "topo -m does not name the GPU: default written (--gpu MODEL)"};
    return;
  }
  if (all_pairs && gpus.size() > 2 && max_sum > catalog_max) {
    // More NVLinks per GPU than any GPU has: the pairs share switch ports, NV# is each GPU's count.
    d_.gpu_fabric = GpuFabric::nvswitch;
    d_.gpu = {id_.gpu_by_nvlinks(max_pair),
              fmt::format("topo -m does not name the GPU: chosen for NV{} on NVSwitch (--gpu MODEL)", max_pair)};
    return;
  }
  d_.gpu_fabric = GpuFabric::nvlink_mesh;
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = a + 1; b < gpus.size(); ++b) {
      const int c = nv_count(m_.rel[gpus[a]][gpus[b]]);
      if (c > 0) d_.nvlink_mesh.push_back({static_cast<int>(a), static_cast<int>(b), c});
    }
  }
  d_.gpu = {id_.gpu_by_nvlinks(max_sum),
            fmt::format("topo -m does not name the GPU: chosen for {} NVLinks per GPU (--gpu MODEL)", max_sum)};
}

ImportedDesign Builder::build() {
  place_pcie();
  settle_nvlink();
  d_.switches_at_gpu_generation = true;
  const auto& net = catalog_.network(id_.network_default());
  d_.network = {net.name, "topo -m names no network or NIC speed: default written (--network TECH)"};
  for (std::size_t i = 0; i < n_; ++i) {
    if (is_gpu(m_.names[i])) {
      d_.gpu_parents.push_back(at_[i]);
    } else {
      ImportedNic nic;
      nic.model = net.default_nic;
      nic.at = at_[i];
      const auto legend = m_.nic_legend.find(m_.names[i]);
      nic.comment = m_.names[i] + (legend == m_.nic_legend.end() ? "" : " (" + legend->second + ")");
      d_.nics.push_back(nic);
    }
  }
  d_.gpus = static_cast<int>(d_.gpu_parents.size());
  if (d_.gpus == 0) throw InputError({file_, 0, 0}, "GPU0", "no GPU rows", "a matrix with GPU0..");
  if (!d_.nics.empty()) d_.nics_note = "NIC model from the network (topo -m names no NIC model)";
  d_.cpu = {id_.cpu_default(""), "topo -m does not name the CPU: default written (--cpu MODEL)"};
  d_.host_memory_GB = id_.host_memory_GB();
  d_.host_memory_note = "not in topo -m: default written";
  d_.gpudirect_note = d_.nics.empty() ? "" : "topo -m does not say whether GPUDirect RDMA works: true written";
  d_.name = cluster_name_of(file_);
  d_.file = file_;
  d_.source = file_ + " (nvidia-smi topo -m)";
  d_.description = fmt::format("{} GPUs, {} NICs on {} socket(s), imported from nvidia-smi topo -m", d_.gpus,
                               d_.nics.size(), d_.sockets);
  return d_;
}

}  // namespace

ImportedDesign read_topo_matrix(const std::string& text, const std::string& file, const hw::Catalog& catalog) {
  const Matrix m = parse(text, file);
  return Builder(m, file, catalog).build();
}

ImportedCluster import_topo_matrix(const std::string& text, const std::string& file, const hw::Catalog& catalog,
                                   const ImportOptions& options) {
  return finish(read_topo_matrix(text, file, catalog), options, catalog);
}

}  // namespace gf::topo::import
