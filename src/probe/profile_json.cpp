#include "probe/profile_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "core/error.hpp"

namespace gf::probe {

using nlohmann::json;

namespace {

constexpr const char* kSchema = "gpufabric-probe";
constexpr int kMaxWhole = 1000000000;
// GPUs one host's profile may describe: more than any server holds, and few enough that the
// peer matrix over them stays small.
constexpr int kMaxGpus = 256;

std::string hex4(unsigned v) { return fmt::format("{:04x}", v); }

json pcie_json(const PcieState& p) {
  return {{"generation", p.generation},
          {"width", p.width},
          {"max_generation", p.max_generation},
          {"max_width", p.max_width}};
}

json collective_json(const CollectiveResult& c) {
  return {{"op", c.op},
          {"library", c.library},
          {"ranks", c.ranks},
          {"size_bytes", c.size.value()},
          {"time_us", in_us(c.time)},
          {"algbw_GBps", in_GBps(c.algbw)},
          {"busbw_GBps", in_GBps(c.busbw)}};
}

// Checked access to one JSON object; `path` names it in messages ("discovery.gpus[2]").
class Reader {
public:
  Reader(const json& j, const std::string& file, std::string path) : j_(j), file_(file), path_(std::move(path)) {
    if (!j_.is_object()) fail("", "expected an object, got " + std::string(j_.type_name()), "a JSON object");
  }

  [[nodiscard]] bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  [[nodiscard]] double number(const char* key, double min = 0) const {
    const json& v = need(key);
    if (!v.is_number()) fail(key, "expected a number, got " + std::string(v.type_name()), "a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < min) fail(key, fmt::format("got {}", d), fmt::format("a number >= {}", min));
    return d;
  }
  [[nodiscard]] std::optional<double> optional_number(const char* key, double min = 0) const {
    if (!has(key)) return std::nullopt;
    return number(key, min);
  }
  [[nodiscard]] int integer(const char* key, int min = 0, int max = kMaxWhole) const {
    const json& v = need(key);
    if (!v.is_number_integer()) fail(key, "expected a whole number, got " + v.dump(), "a whole number");
    // Read as JSON holds it: an unsigned 64-bit value read as signed would be reported as -1.
    std::int64_t i = 0;
    bool ok = true;
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      ok = u <= static_cast<std::uint64_t>(max);
      if (ok) i = static_cast<std::int64_t>(u);
    } else {
      i = v.get<std::int64_t>();
    }
    if (!ok || i < min || i > max) fail(key, "got " + v.dump(), fmt::format("a whole number from {} to {}", min, max));
    return static_cast<int>(i);
  }
  // An index into `count` things (the profile's GPUs, the job's ranks).
  [[nodiscard]] int index(const char* key, int count, const char* what) const {
    const int i = integer(key, 0, kMaxWhole);
    if (i >= count) {
      fail(key,
           fmt::format("{} {} is not among the profile's {} {}", what == std::string("GPUs") ? "GPU" : "rank", i, count,
                       what),
           count == 0 ? std::string("no entry: the profile lists none") : fmt::format("0 to {}", count - 1));
    }
    return i;
  }
  [[nodiscard]] std::string text(const char* key) const {
    const json& v = need(key);
    if (!v.is_string()) fail(key, "expected a string, got " + std::string(v.type_name()), "a string");
    return v.get<std::string>();
  }
  [[nodiscard]] bool boolean(const char* key) const {
    const json& v = need(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + v.dump(), "true, false");
    return v.get<bool>();
  }
  [[nodiscard]] unsigned hex(const char* key) const {
    const std::string s = text(key);
    unsigned v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (s.empty() || s.size() > 4 || ec != std::errc() || p != s.data() + s.size()) {
      fail(key, "got '" + s + "'", "a 16-bit PCI ID in hex, e.g. 10de");
    }
    return v;
  }
  [[nodiscard]] Reader object(const char* key) const {
    const json& v = need(key);
    return Reader(v, file_, sub(key));
  }
  // Each element of an array (absent = empty when `required` is false).
  template <typename F>
  void each(const char* key, F f, bool required = true) const {
    if (!has(key)) {
      if (required) fail(key, "missing", "an array");
      return;
    }
    const json& v = j_.at(key);
    if (!v.is_array()) fail(key, "expected an array, got " + std::string(v.type_name()), "an array");
    for (std::size_t i = 0; i < v.size(); ++i) f(Reader(v[i], file_, fmt::format("{}[{}]", sub(key), i)));
  }
  [[nodiscard]] std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const json& v = j_.at(key);
    if (!v.is_array()) fail(key, "expected an array of strings", "an array of strings");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(key, fmt::format("element {} is not a string", i), "an array of strings");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem, const std::string& valid) const {
    throw InputError({file_, 0, 0}, key.empty() ? path_ : sub(key.c_str()), problem, valid);
  }

private:
  [[nodiscard]] std::string sub(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  const json& need(const char* key) const {
    if (!has(key)) fail(key, "missing", "");
    return j_.at(key);
  }
  const json& j_;
  const std::string& file_;
  std::string path_;
};

PcieState read_pcie(const Reader& r) {
  PcieState p;
  p.generation = r.integer("generation");
  p.width = r.integer("width");
  p.max_generation = r.integer("max_generation");
  p.max_width = r.integer("max_width");
  return p;
}

CollectiveResult read_collective(const Reader& r) {
  CollectiveResult c;
  c.op = r.text("op");
  c.library = r.text("library");
  c.ranks = r.integer("ranks", 1);
  c.size = Bytes(r.number("size_bytes"));
  c.time = microseconds(r.number("time_us"));
  c.algbw = gigabytes_per_second(r.number("algbw_GBps"));
  c.busbw = gigabytes_per_second(r.number("busbw_GBps"));
  return c;
}

// The GPUs a profile knows: those discovery listed and those it measured copies on.
int profile_gpu_count(const Discovery& d, const GpuResults& g) {
  int n = static_cast<int>(d.gpus.size());
  for (const auto& x : d.gpus) n = std::max(n, x.index + 1);
  for (const auto& c : g.copies) n = std::max(n, c.gpu + 1);
  return n;
}

}  // namespace

json profile_to_json(const Profile& p) {
  json j;
  j["schema"] = kSchema;
  j["schema_version"] = p.schema_version;
  j["gpufabric_version"] = p.gpufabric_version;
  j["measured_at"] = p.measured_at;
  j["quick"] = p.quick;
  const Discovery& d = p.discovery;
  json dj = {{"hostname", d.hostname},     {"cpu_model", d.cpu_model}, {"packages", d.packages},
             {"cores", d.cores},           {"threads", d.threads},     {"memory_bytes", d.memory.value()},
             {"gpu_source", d.gpu_source}, {"notes", d.notes}};
  dj["numa_nodes"] = json::array();
  for (const auto& n : d.numa_nodes) {
    dj["numa_nodes"].push_back({{"os_index", n.os_index}, {"memory_bytes", n.memory.value()}, {"cores", n.cores}});
  }
  dj["pci_devices"] = json::array();
  for (const auto& x : d.pci_devices) {
    json e = {{"address", x.address},
              {"vendor_id", hex4(x.vendor_id)},
              {"device_id", hex4(x.device_id)},
              {"class_id", hex4(x.class_id)},
              {"name", x.name},
              {"os_devices", x.os_devices}};
    if (x.link) e["link_GBps"] = in_GBps(*x.link);
    dj["pci_devices"].push_back(e);
  }
  dj["gpus"] = json::array();
  for (const auto& g : d.gpus) {
    dj["gpus"].push_back({{"index", g.index},
                          {"name", g.name},
                          {"pci_address", g.pci_address},
                          {"pcie", pcie_json(g.pcie)},
                          {"pcie_under_load", g.pcie_under_load},
                          {"nvlinks_active", g.nvlinks_active}});
  }
  dj["nics"] = json::array();
  for (const auto& n : d.nics) {
    json e = {{"name", n.name},
              {"kind", n.kind},
              {"state", n.state},
              {"pci_address", n.pci_address},
              {"vendor_id", hex4(n.vendor_id)},
              {"device_id", hex4(n.device_id)},
              {"model", n.model},
              {"pcie", pcie_json(n.pcie)}};
    if (n.speed) e["speed_Gbps"] = in_Gbps(*n.speed);
    dj["nics"].push_back(e);
  }
  j["discovery"] = dj;
  j["memory"] = json::array();
  for (const auto& m : p.memory) {
    j["memory"].push_back({{"numa_node", m.numa_node},
                           {"threads", m.threads},
                           {"array_bytes", m.array_size.value()},
                           {"llc_bytes", m.llc.value()},
                           {"repetitions", m.repetitions},
                           {"copy_GBps", in_GBps(m.copy)},
                           {"triad_GBps", in_GBps(m.triad)}});
  }
  if (p.storage) {
    const auto& s = *p.storage;
    j["storage"] = {{"directory", s.directory},          {"filesystem", s.filesystem},
                    {"file_bytes", s.file_size.value()}, {"block_bytes", s.block.value()},
                    {"direct_io", s.direct_io},          {"write_GBps", in_GBps(s.write)},
                    {"read_GBps", in_GBps(s.read)},      {"note", s.note}};
  }
  if (p.decode) {
    const auto& x = *p.decode;
    j["decode"] = {{"width", x.width},
                   {"height", x.height},
                   {"quality", x.quality},
                   {"jpeg_bytes", x.jpeg_size.value()},
                   {"threads", x.threads},
                   {"jpeg_per_core_images_per_s", x.jpeg_per_core.value()},
                   {"jpeg_all_cores_images_per_s", x.jpeg_all_cores.value()},
                   {"inflate_per_core_MBps", x.inflate_per_core.value() / 1e6},
                   {"inflate_all_cores_MBps", x.inflate_all_cores.value() / 1e6},
                   {"deflate_ratio", x.deflate_ratio}};
  }
  if (p.gpu) {
    json g;
    g["copies"] = json::array();
    for (const auto& c : p.gpu->copies) {
      json pts = json::array();
      for (const auto& pt : c.points) pts.push_back({{"size_bytes", pt.size.value()}, {"GBps", in_GBps(pt.bandwidth)}});
      g["copies"].push_back({{"gpu", c.gpu},
                             {"pci_address", c.pci_address},
                             {"direction", c.direction},
                             {"memory", c.memory},
                             {"points", pts}});
    }
    g["peers"] = json::array();
    for (const auto& x : p.gpu->peers) {
      g["peers"].push_back(
          {{"src", x.src}, {"dst", x.dst}, {"peer_access", x.peer_access}, {"GBps", in_GBps(x.bandwidth)}});
    }
    g["gemm"] = json::array();
    for (const auto& x : p.gpu->gemms)
      g["gemm"].push_back(
          {{"gpu", x.gpu}, {"precision", x.precision}, {"m", x.m}, {"n", x.n}, {"k", x.k}, {"tflops", x.tflops}});
    if (p.gpu->nccl) g["nccl"] = collective_json(*p.gpu->nccl);
    g["notes"] = p.gpu->notes;
    j["gpu"] = g;
  }
  if (p.mpi) {
    json m = {{"ranks", p.mpi->ranks}, {"hosts", p.mpi->hosts}, {"library", p.mpi->library}, {"notes", p.mpi->notes}};
    m["pairs"] = json::array();
    for (const auto& x : p.mpi->pairs) {
      m["pairs"].push_back({{"rank_a", x.rank_a},
                            {"rank_b", x.rank_b},
                            {"host_a", x.host_a},
                            {"host_b", x.host_b},
                            {"size_bytes", x.size.value()},
                            {"GBps", in_GBps(x.bandwidth)},
                            {"latency_us", in_us(x.latency)}});
    }
    if (p.mpi->allreduce) m["allreduce"] = collective_json(*p.mpi->allreduce);
    if (p.mpi->nccl) m["nccl"] = collective_json(*p.mpi->nccl);
    j["mpi"] = m;
  }
  return j;
}

Profile profile_from_json(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto upto = std::min<std::size_t>(e.byte, text.size());
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(upto), '\n'));
    throw InputError({file, line, 0}, "", "not valid JSON", "a profile written by gpufabric probe --save");
  } catch (const json::exception& e) {
    // Valid syntax that nlohmann cannot hold: a number beyond a double's range (1e3080).
    throw InputError({file, 0, 0}, "", std::string("not a readable profile: ") + e.what(),
                     "a profile written by gpufabric probe --save");
  }
  const Reader r(j, file, "");
  if (!r.has("schema") || r.text("schema") != kSchema) {
    r.fail("schema", "missing or not '" + std::string(kSchema) + "'", "a profile written by gpufabric probe --save");
  }
  Profile p;
  p.schema_version = r.integer("schema_version", 1);
  if (p.schema_version != kProfileSchemaVersion) {
    r.fail("schema_version", fmt::format("got {}", p.schema_version),
           fmt::format("{} (the version this gpufabric reads)", kProfileSchemaVersion));
  }
  p.gpufabric_version = r.text("gpufabric_version");
  p.measured_at = r.text("measured_at");
  p.quick = r.boolean("quick");
  const Reader d = r.object("discovery");
  Discovery& dd = p.discovery;
  dd.hostname = d.text("hostname");
  dd.cpu_model = d.text("cpu_model");
  dd.packages = d.integer("packages");
  dd.cores = d.integer("cores");
  dd.threads = d.integer("threads");
  dd.memory = Bytes(d.number("memory_bytes"));
  dd.gpu_source = d.text("gpu_source");
  dd.notes = d.strings("notes");
  d.each("numa_nodes", [&](const Reader& n) {
    dd.numa_nodes.push_back({n.integer("os_index"), Bytes(n.number("memory_bytes")), n.integer("cores")});
  });
  d.each("pci_devices", [&](const Reader& x) {
    PciDeviceInfo e;
    e.address = x.text("address");
    e.vendor_id = x.hex("vendor_id");
    e.device_id = x.hex("device_id");
    e.class_id = x.hex("class_id");
    e.name = x.text("name");
    if (const auto l = x.optional_number("link_GBps")) e.link = gigabytes_per_second(*l);
    e.os_devices = x.strings("os_devices");
    dd.pci_devices.push_back(e);
  });
  d.each("gpus", [&](const Reader& x) {
    GpuInfo g;
    g.index = x.integer("index", 0, kMaxGpus - 1);
    g.name = x.text("name");
    g.pci_address = x.text("pci_address");
    g.pcie = read_pcie(x.object("pcie"));
    g.pcie_under_load = x.boolean("pcie_under_load");
    g.nvlinks_active = x.integer("nvlinks_active", -1);
    dd.gpus.push_back(g);
  });
  d.each("nics", [&](const Reader& x) {
    NicInfo n;
    n.name = x.text("name");
    n.kind = x.text("kind");
    n.state = x.text("state");
    n.pci_address = x.text("pci_address");
    n.vendor_id = x.hex("vendor_id");
    n.device_id = x.hex("device_id");
    n.model = x.text("model");
    n.pcie = read_pcie(x.object("pcie"));
    if (const auto s = x.optional_number("speed_Gbps")) n.speed = gigabits_per_second(*s);
    dd.nics.push_back(n);
  });
  r.each(
      "memory",
      [&](const Reader& x) {
        MemoryResult m;
        m.numa_node = x.integer("numa_node", -1);
        m.threads = x.integer("threads", 1);
        m.array_size = Bytes(x.number("array_bytes", 1));
        m.llc = Bytes(x.number("llc_bytes"));
        m.repetitions = x.integer("repetitions", 1);
        m.copy = gigabytes_per_second(x.number("copy_GBps"));
        m.triad = gigabytes_per_second(x.number("triad_GBps"));
        p.memory.push_back(m);
      },
      false);
  if (r.has("storage")) {
    const Reader x = r.object("storage");
    StorageResult s;
    s.directory = x.text("directory");
    s.filesystem = x.text("filesystem");
    s.file_size = Bytes(x.number("file_bytes", 1));
    s.block = Bytes(x.number("block_bytes", 1));
    s.direct_io = x.boolean("direct_io");
    s.write = gigabytes_per_second(x.number("write_GBps"));
    s.read = gigabytes_per_second(x.number("read_GBps"));
    s.note = x.text("note");
    p.storage = s;
  }
  if (r.has("decode")) {
    const Reader x = r.object("decode");
    DecodeResult c;
    c.width = x.integer("width", 1);
    c.height = x.integer("height", 1);
    c.quality = x.integer("quality", 1);
    c.jpeg_size = Bytes(x.number("jpeg_bytes", 1));
    c.threads = x.integer("threads", 1);
    c.jpeg_per_core = ImageRate(x.number("jpeg_per_core_images_per_s"));
    c.jpeg_all_cores = ImageRate(x.number("jpeg_all_cores_images_per_s"));
    c.inflate_per_core = Bandwidth(x.number("inflate_per_core_MBps") * 1e6);
    c.inflate_all_cores = Bandwidth(x.number("inflate_all_cores_MBps") * 1e6);
    c.deflate_ratio = x.number("deflate_ratio");
    p.decode = c;
  }
  if (r.has("gpu")) {
    const Reader x = r.object("gpu");
    GpuResults g;
    x.each("copies", [&](const Reader& c) {
      CopyCurve cc;
      cc.gpu = c.integer("gpu", 0, kMaxGpus - 1);
      cc.pci_address = c.text("pci_address");
      cc.direction = c.text("direction");
      if (cc.direction != "h2d" && cc.direction != "d2h" && cc.direction != "d2d") {
        c.fail("direction", "got '" + cc.direction + "'", "h2d, d2h, d2d");
      }
      cc.memory = c.text("memory");
      c.each("points", [&](const Reader& pt) {
        cc.points.push_back({Bytes(pt.number("size_bytes", 1)), gigabytes_per_second(pt.number("GBps"))});
      });
      g.copies.push_back(cc);
    });
    // Peer copies index the profile's GPUs; the report draws a matrix over them, so an index
    // outside them would make it as large as the index.
    const int gpus = profile_gpu_count(dd, g);
    x.each("peers", [&](const Reader& c) {
      g.peers.push_back({c.index("src", gpus, "GPUs"), c.index("dst", gpus, "GPUs"), c.boolean("peer_access"),
                         gigabytes_per_second(c.number("GBps"))});
    });
    if (x.has("gemm")) {
      x.each("gemm", [&](const Reader& c) {
        GemmMeasurement gm;
        gm.gpu = c.index("gpu", gpus, "GPUs");
        gm.precision = c.text("precision");
        if (gm.precision != "bf16" && gm.precision != "fp16" && gm.precision != "tf32")
          c.fail("precision", "got '" + gm.precision + "'", "bf16, fp16, tf32");
        gm.m = c.integer("m", 1);
        gm.n = c.integer("n", 1);
        gm.k = c.integer("k", 1);
        // Above 100 PFLOP/s no GPU of today or the next generations reaches: a unit mistake.
        gm.tflops = c.number("tflops", 1e-3);
        if (gm.tflops > 1e5) c.fail("tflops", "implausibly large", "TFLOP/s of one GPU (below 100000)");
        g.gemms.push_back(gm);
      });
    }
    if (x.has("nccl")) g.nccl = read_collective(x.object("nccl"));
    g.notes = x.strings("notes");
    p.gpu = g;
  }
  if (r.has("mpi")) {
    const Reader x = r.object("mpi");
    MpiResults m;
    m.ranks = x.integer("ranks", 1);
    m.hosts = x.integer("hosts", 1);
    m.library = x.text("library");
    m.notes = x.strings("notes");
    x.each("pairs", [&](const Reader& c) {
      PairResult pr;
      pr.rank_a = c.integer("rank_a");
      pr.rank_b = c.integer("rank_b");
      pr.host_a = c.text("host_a");
      pr.host_b = c.text("host_b");
      pr.size = Bytes(c.number("size_bytes", 1));
      pr.bandwidth = gigabytes_per_second(c.number("GBps"));
      pr.latency = microseconds(c.number("latency_us"));
      m.pairs.push_back(pr);
    });
    if (x.has("allreduce")) m.allreduce = read_collective(x.object("allreduce"));
    if (x.has("nccl")) m.nccl = read_collective(x.object("nccl"));
    p.mpi = m;
  }
  return p;
}

}  // namespace gf::probe
