// Parsing of catalog YAML files into spec structs. Every key is checked; see
// docs/catalog-format.md for the format.
#include <algorithm>
#include <filesystem>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "hw/catalog.hpp"

namespace gf::hw {

namespace {

std::string entry_path(const char* section, const YAML::Node& item, std::size_t index) {
  if (item.IsMap() && item["name"] && item["name"].IsScalar()) {
    return std::string(section) + "[" + item["name"].as<std::string>() + "]";
  }
  if (item.IsMap() && item["generation"] && item["generation"].IsScalar()) {
    return std::string(section) + "[gen " + item["generation"].as<std::string>() + "]";
  }
  return std::string(section) + "[" + std::to_string(index) + "]";
}

PcieLink parse_pcie_link(const Fields& parent, const char* key) {
  const Fields f(parent.node(key), parent.file(), parent.field(key), {"generation", "lanes"});
  return {static_cast<int>(f.integer("generation", 1, 7)), static_cast<int>(f.integer("lanes", 1, 256))};
}

std::string source_of(const Fields& f, const char* key = "source") {
  std::string s = f.text(key);
  if (s.find_first_not_of(" \t") == std::string::npos) f.fail(key, "a citation must not be empty");
  return s;
}

GpuSpec parse_gpu(const Fields& f) {
  GpuSpec g;
  g.name = f.text("name");
  g.display_name = f.text_or("display_name", g.name);
  g.vendor = f.choice("vendor", {"nvidia", "amd"});
  g.nominal_memory = gigabytes(f.positive("memory_GB"));
  if (f.has("memory_MiB")) {
    g.memory = Bytes(f.positive("memory_MiB") * 1024 * 1024);
    g.memory_source = source_of(f, "memory_MiB_source");
    g.memory_estimated = f.flag_or("memory_MiB_estimate", false);
  } else {
    // A product's "N GB" is N GiB of DRAM; the driver keeps a little of it (0.4% on Hopper), which
    // a file without nvidia-smi's figure cannot know.
    g.memory = Bytes(f.positive("memory_GB") * 1024 * 1024 * 1024);
    g.memory_source = "memory_GB read as GiB (no memory_MiB given)";
    g.memory_estimated = true;
  }
  g.memory_bandwidth = gigabytes_per_second(f.positive("memory_bandwidth_GBps"));
  const Fields tf(f.node("tflops_dense"), f.file(), f.field("tflops_dense"),
                  {"fp64", "tf32", "fp16", "bf16", "fp8", "int8", "fp4", "fp32_vector"});
  for (const auto& kv : f.node("tflops_dense")) {
    const std::string p = kv.first.as<std::string>();
    g.tflops_dense[p] = tf.positive(p.c_str());
  }
  if (f.has("nvlink") && !f.node("nvlink").IsNull()) {
    const Fields nf(f.node("nvlink"), f.file(), f.field("nvlink"), {"generation", "links", "link_GBps"});
    ScaleUpPorts p;
    const std::string gen = nf.text("generation");
    p.generation = gen == "xgmi" ? 0 : static_cast<int>(nf.integer("generation", 1, 5));
    p.links = static_cast<int>(nf.integer("links", 1, 72));
    if (nf.has("link_GBps")) p.link_rate = gigabytes_per_second(nf.positive("link_GBps"));
    if (p.generation == 0 && !p.link_rate) nf.fail("link_GBps", "required for xGMI links");
    g.nvlink = p;
  }
  g.pcie = parse_pcie_link(f, "pcie");
  g.tdp = watts(f.positive("tdp_W"));
  const Fields mf(f.node("mig"), f.file(), f.field("mig"), {"supported", "max_instances"});
  g.mig_supported = mf.flag("supported");
  g.mig_max_instances = g.mig_supported ? static_cast<int>(mf.integer("max_instances", 1, 64)) : 0;
  g.p2p_supported = f.flag_or("p2p_supported", true);
  // NVIDIA GPUs carry their compute capability (sm_90 = 90): NCCL's tables and protocols are
  // chosen by it, never by the GPU's name.
  if (g.vendor == "nvidia" || f.has("compute_capability")) {
    g.compute_capability = static_cast<int>(f.integer("compute_capability", 30, 200));
  }
  g.source = source_of(f);
  g.note = f.text_or("note", "");
  return g;
}

PcieGeneration parse_pcie(const Fields& f) {
  PcieGeneration p;
  p.generation = static_cast<int>(f.integer("generation", 1, 7));
  p.transfer_rate_GTps = f.positive("transfer_rate_GTps");
  p.encoding = f.text("encoding");
  p.lane_rate = gigabytes_per_second(f.positive("lane_GBps"));
  p.copy_efficiency = f.fraction("copy_efficiency");
  p.hop_latency = nanoseconds(f.positive("hop_latency_ns"));
  p.switch_latency = nanoseconds(f.positive("switch_latency_ns"));
  p.source = source_of(f);
  p.note = f.text_or("note", "");
  return p;
}

NvlinkGeneration parse_nvlink(const Fields& f) {
  NvlinkGeneration n;
  n.generation = static_cast<int>(f.integer("generation", 1, 7));
  n.link_rate = gigabytes_per_second(f.positive("link_GBps"));
  n.lanes_per_link = static_cast<int>(f.integer("lanes_per_link", 1, 16));
  n.max_links = static_cast<int>(f.integer("max_links", 1, 72));
  n.efficiency = f.fraction("efficiency");
  n.hop_latency = nanoseconds(f.positive("hop_latency_ns"));
  n.source = source_of(f);
  n.note = f.text_or("note", "");
  return n;
}

NvswitchGeneration parse_nvswitch(const Fields& f) {
  NvswitchGeneration n;
  n.generation = static_cast<int>(f.integer("generation", 1, 7));
  n.nvlink_generation = static_cast<int>(f.integer("nvlink_generation", 1, 7));
  n.ports = static_cast<int>(f.integer("ports", 1, 1024));
  n.nvls = f.flag("nvls");
  n.latency = nanoseconds(f.positive("latency_ns"));
  n.source = source_of(f);
  n.note = f.text_or("note", "");
  return n;
}

NetworkTech parse_network(const Fields& f) {
  NetworkTech n;
  n.name = f.text("name");
  n.family = f.choice("family", {"infiniband", "roce", "ethernet", "efa", "slingshot"});
  n.transport = f.choice("transport", {"rdma", "tcp", "srd", "tcpx"});
  n.line_rate_Gbps = f.positive("line_rate_Gbps");
  n.data_rate = gigabits_per_second(f.positive("data_rate_Gbps"));
  n.efficiency = f.fraction("efficiency");
  n.endpoint_latency = microseconds(f.positive("endpoint_latency_us"));
  n.default_switch = f.text("default_switch");
  n.default_nic = f.text("default_nic");
  if (f.has("load_balancing")) n.load_balancing = f.choice("load_balancing", kLoadBalancingNames);
  n.load_balancing_source = f.text_or("load_balancing_source", "");
  n.nccl_env_source = f.text_or("nccl_env_source", "");
  if (const YAML::Node env = f.node_or_null("nccl_env"); env) {
    if (!env.IsMap()) f.fail("nccl_env", "not a mapping", "NCCL variables, e.g. {NCCL_ALGO: \"Ring,Tree\"}");
    for (const auto& kv : env) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
      if (!kv.second.IsScalar() || key.rfind("NCCL_", 0) != 0) {
        f.fail("nccl_env", "every key must be an NCCL_* variable and every value a plain string",
               "{NCCL_NAME: \"value\"}");
      }
      n.nccl_env.push_back({key, kv.second.Scalar(), location_of(kv.first, f.file()), f.field("nccl_env") + "." + key});
    }
  }
  n.source = source_of(f);
  n.note = f.text_or("note", "");
  return n;
}

NicSpec parse_nic(const Fields& f) {
  NicSpec n;
  n.name = f.text("name");
  n.display_name = f.text_or("display_name", n.name);
  n.max_rate = gigabits_per_second(f.positive("max_rate_Gbps"));
  n.ports = static_cast<int>(f.integer_or("ports", 1, 8, 1));
  n.pcie = parse_pcie_link(f, "pcie");
  n.families = f.text_list("families");
  for (const auto& fam : n.families) {
    const std::vector<std::string> ok{"infiniband", "roce", "ethernet", "efa", "slingshot"};
    if (std::find(ok.begin(), ok.end(), fam) == ok.end()) f.fail("families", "unknown family '" + fam + "'", join(ok));
  }
  n.latency = nanoseconds(f.positive_or("latency_ns", 600));
  n.ll_protocols = f.flag_or("ll_protocols", true);
  n.source = source_of(f);
  n.note = f.text_or("note", "");
  return n;
}

SwitchSpec parse_switch(const Fields& f) {
  SwitchSpec s;
  s.name = f.text("name");
  s.display_name = f.text_or("display_name", s.name);
  s.family = f.choice("family", {"infiniband", "ethernet", "efa", "slingshot"});
  s.radix = static_cast<int>(f.integer("radix", 2, 4096));
  s.port_rate = gigabits_per_second(f.positive("port_rate_Gbps"));
  s.latency = nanoseconds(f.positive("latency_ns"));
  s.sharp = f.flag_or("sharp", false);
  if (s.sharp)
    s.sharp_efficiency = f.fraction("sharp_efficiency");
  else if (f.has("sharp_efficiency"))
    f.fail("sharp_efficiency", "is only meaningful with sharp: true", "remove it, or set sharp: true");
  s.source = source_of(f);
  s.note = f.text_or("note", "");
  return s;
}

StorageSpec parse_storage(const Fields& f) {
  StorageSpec s;
  s.name = f.text("name");
  s.kind = f.choice("kind", {"hdd", "sata-ssd", "nvme", "network-fs"});
  s.read = gigabytes_per_second(f.positive("read_GBps"));
  s.write = gigabytes_per_second(f.positive("write_GBps"));
  const Fields itf(f.node("interface"), f.file(), f.field("interface"), {"pcie", "sata", "network"});
  if (itf.has("pcie")) s.pcie = parse_pcie_link(itf, "pcie");
  s.latency = microseconds(f.positive("latency_us"));
  s.source = source_of(f);
  s.note = f.text_or("note", "");
  return s;
}

CpuSpec parse_cpu(const Fields& f) {
  CpuSpec c;
  c.name = f.text("name");
  c.display_name = f.text_or("display_name", c.name);
  c.cores = static_cast<int>(f.integer("cores", 1, 1024));
  const Fields mf(f.node("memory"), f.file(), f.field("memory"), {"type", "channels", "mts"});
  c.memory_type = mf.text("type");
  c.memory_channels = static_cast<int>(mf.integer("channels", 1, 64));
  c.memory_mts = mf.positive("mts");
  c.memory_bandwidth = gigabytes_per_second(f.positive("memory_bandwidth_GBps"));
  c.stream_efficiency = f.fraction("stream_efficiency");
  c.pcie = parse_pcie_link(f, "pcie");
  if (f.has("socket_link")) {
    const Fields sf(f.node("socket_link"), f.file(), f.field("socket_link"),
                    {"name", "bandwidth_GBps", "device_GBps", "peer_GBps"});
    c.socket_link_name = sf.text("name");
    c.socket_link = gigabytes_per_second(sf.positive("bandwidth_GBps"));
    if (sf.has("device_GBps")) c.socket_link_device = gigabytes_per_second(sf.positive("device_GBps"));
    if (sf.has("peer_GBps")) c.socket_link_peer = gigabytes_per_second(sf.positive("peer_GBps"));
  }
  c.socket_link_latency = nanoseconds(f.positive_or("socket_link_latency_ns", 100));
  c.source = source_of(f);
  c.note = f.text_or("note", "");
  return c;
}

// Physically sensible ranges, checked on the converted figures (so 1e300 GB/s, which overflows to
// infinity, and 1e-300 GB/s, which makes every transfer take forever, are refused here).
namespace range {
using physical::bandwidth;
using physical::latency;
void check(const GpuSpec& g, const Fields& f) {
  f.check_physical("memory_GB", g.nominal_memory.value(), 1e9, physical::size);
  if (f.has("memory_MiB")) f.check_physical("memory_MiB", g.memory.value(), 1024.0 * 1024, physical::size);
  f.check_physical("memory_bandwidth_GBps", g.memory_bandwidth.value(), 1e9, bandwidth);
  const Fields tf = f.nested("tflops_dense");
  for (const auto& [p, v] : g.tflops_dense) tf.check_physical(p.c_str(), v * 1e12, 1e12, physical::flop_rate);
  if (g.nvlink && g.nvlink->link_rate) {
    const Fields nf = f.nested("nvlink");
    nf.check_physical("link_GBps", g.nvlink->link_rate->value(), 1e9, bandwidth);
  }
  f.check_physical("tdp_W", g.tdp.value(), 1, physical::power);
}
void check(const PcieGeneration& p, const Fields& f) {
  f.check_physical("transfer_rate_GTps", p.transfer_rate_GTps * 1e9, 1e9, physical::frequency);
  f.check_physical("lane_GBps", p.lane_rate.value(), 1e9, bandwidth);
  f.check_physical("hop_latency_ns", p.hop_latency.value(), 1e-9, latency);
  f.check_physical("switch_latency_ns", p.switch_latency.value(), 1e-9, latency);
}
void check(const NvlinkGeneration& n, const Fields& f) {
  f.check_physical("link_GBps", n.link_rate.value(), 1e9, bandwidth);
  f.check_physical("hop_latency_ns", n.hop_latency.value(), 1e-9, latency);
}
void check(const NvswitchGeneration& n, const Fields& f) {
  f.check_physical("latency_ns", n.latency.value(), 1e-9, latency);
}
void check(const NetworkTech& n, const Fields& f) {
  f.check_physical("line_rate_Gbps", n.line_rate_Gbps * 1e9 / 8, 1e9 / 8, bandwidth);
  f.check_physical("data_rate_Gbps", n.data_rate.value(), 1e9 / 8, bandwidth);
  f.check_physical("endpoint_latency_us", n.endpoint_latency.value(), 1e-6, latency);
}
void check(const NicSpec& n, const Fields& f) {
  f.check_physical("max_rate_Gbps", n.max_rate.value(), 1e9 / 8, bandwidth);
  if (f.has("latency_ns")) f.check_physical("latency_ns", n.latency.value(), 1e-9, latency);
}
void check(const SwitchSpec& s, const Fields& f) {
  f.check_physical("port_rate_Gbps", s.port_rate.value(), 1e9 / 8, bandwidth);
  f.check_physical("latency_ns", s.latency.value(), 1e-9, latency);
}
void check(const StorageSpec& s, const Fields& f) {
  f.check_physical("read_GBps", s.read.value(), 1e9, bandwidth);
  f.check_physical("write_GBps", s.write.value(), 1e9, bandwidth);
  f.check_physical("latency_us", s.latency.value(), 1e-6, latency);
}
void check(const CpuSpec& c, const Fields& f) {
  const Fields mf = f.nested("memory");
  mf.check_physical("mts", c.memory_mts * 1e6, 1e6, physical::frequency);
  f.check_physical("memory_bandwidth_GBps", c.memory_bandwidth.value(), 1e9, bandwidth);
  if (c.socket_link) {
    const Fields sf = f.nested("socket_link");
    sf.check_physical("bandwidth_GBps", c.socket_link->value(), 1e9, bandwidth);
  }
  if (f.has("socket_link_latency_ns")) {
    f.check_physical("socket_link_latency_ns", c.socket_link_latency.value(), 1e-9, latency);
  }
}
}  // namespace range

std::string fmt_key(int generation) { return "gen" + std::to_string(generation); }
std::string fmt_key(const std::string& name) { return name; }

template <typename Spec, typename Key, typename Parse>
void load_section(const YAML::Node& root, const char* section, const std::string& file,
                  std::initializer_list<const char*> keys, std::map<Key, Spec>& into,
                  std::map<std::string, SourceLocation>& origin, Parse parse) {
  const YAML::Node list = root[section];
  if (!list) return;
  std::size_t index = 0;
  for (const auto& item : as_list(list, file, section)) {
    const Fields f(item, file, entry_path(section, item, index++), keys);
    Spec spec = parse(f);
    range::check(spec, f);
    Key key;
    if constexpr (std::is_same_v<Key, int>) {
      key = spec.generation;
    } else {
      key = spec.name;
    }
    origin[std::string(section) + "/" + fmt_key(key)] = f.where();
    into[key] = std::move(spec);
  }
}

}  // namespace

void Catalog::load_text(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  if (root.IsNull()) return;
  const Fields top(root, file, "",
                   {"gpus", "pcie", "nvlink", "nvswitch", "networks", "nics", "switches", "storage", "cpus",
                    "host_staging", "pageable_copy"});
  for (auto [key, target] : {std::pair{"host_staging", &host_staging_}, std::pair{"pageable_copy", &pageable_copy_}}) {
    if (!top.has(key)) continue;
    const Fields hf(top.node(key), file, key, {"efficiency", "source", "note"});
    target->efficiency = hf.fraction("efficiency");
    target->source = source_of(hf);
    target->note = hf.text_or("note", "");
  }
  load_section(root, "gpus", file,
               {"name", "display_name", "vendor", "memory_GB", "memory_MiB", "memory_MiB_source", "memory_MiB_estimate",
                "memory_bandwidth_GBps", "tflops_dense", "nvlink", "pcie", "tdp_W", "mig", "p2p_supported",
                "compute_capability", "source", "note"},
               gpus_, origin_, parse_gpu);
  load_section(root, "pcie", file,
               {"generation", "transfer_rate_GTps", "encoding", "lane_GBps", "copy_efficiency", "hop_latency_ns",
                "switch_latency_ns", "source", "note"},
               pcie_, origin_, parse_pcie);
  load_section(
      root, "nvlink", file,
      {"generation", "link_GBps", "lanes_per_link", "max_links", "efficiency", "hop_latency_ns", "source", "note"},
      nvlink_, origin_, parse_nvlink);
  load_section(root, "nvswitch", file,
               {"generation", "nvlink_generation", "ports", "nvls", "latency_ns", "source", "note"}, nvswitch_, origin_,
               parse_nvswitch);
  load_section(root, "networks", file,
               {"name", "family", "transport", "line_rate_Gbps", "data_rate_Gbps", "efficiency", "endpoint_latency_us",
                "default_switch", "default_nic", "load_balancing", "nccl_env", "source", "note"},
               networks_, origin_, parse_network);
  load_section(root, "nics", file,
               {"name", "display_name", "max_rate_Gbps", "ports", "pcie", "families", "latency_ns", "ll_protocols",
                "source", "note"},
               nics_, origin_, parse_nic);
  load_section(root, "switches", file,
               {"name", "display_name", "family", "radix", "port_rate_Gbps", "latency_ns", "sharp", "sharp_efficiency",
                "source", "note"},
               switches_, origin_, parse_switch);
  load_section(root, "storage", file,
               {"name", "kind", "read_GBps", "write_GBps", "interface", "latency_us", "source", "note"}, storage_,
               origin_, parse_storage);
  load_section(root, "cpus", file,
               {"name", "display_name", "cores", "memory", "memory_bandwidth_GBps", "stream_efficiency", "pcie",
                "socket_link", "socket_link_latency_ns", "source", "note"},
               cpus_, origin_, parse_cpu);
}

void Catalog::load_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError({dir, 0, 0}, "--catalog", "not a directory", "a directory of *.yaml catalog files");
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    throw InputError({dir, 0, 0}, "--catalog", "no *.yaml files in directory");
  }
  for (const auto& p : files) {
    load_text(read_text_file(p.string(), "--catalog"), p.string());
  }
  check_references();
}

Catalog Catalog::builtin() {
  Catalog c;
  for (const auto& f : data::files_under("data/catalog/", ".yaml"))
    c.load_text(std::string(f.text), "builtin:" + std::string(f.path));
  c.check_references();
  return c;
}

}  // namespace gf::hw
