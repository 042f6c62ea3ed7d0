// Steady-state model of the input pipeline of one server. See pipeline.hpp for the picture.
//
// One window of the pipeline is one batch per GPU. Every byte-moving stage of every GPU is a
// flow in the flow engine: reads from storage into the loader's socket memory, the CPU's memory
// traffic while decoding, host-to-device and device-to-host copies. DRAM is one resource per
// socket shared by reads and writes (a virtual link at the socket's STREAM bandwidth), which the
// duplex memory links of the topology graph cannot express. A stage's capacity "alone" runs its
// flows by themselves; "loaded" runs every stage's flows together, so links they share are
// split max-min fairly, as the hardware does to first order.
#include "work/pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/error.hpp"
#include "sim/engine.hpp"
#include "sim/task_graph.hpp"

namespace gf::work {

const char* to_string(DataSource s) { return name_of(kDataSourceNames, s); }
const char* to_string(DecodeOn d) { return name_of(kDecodeOnNames, d); }
const char* to_string(HostBuffers b) { return name_of(kHostBuffersNames, b); }

const StageResult* PipelineResult::stage(const std::string& name) const {
  for (const auto& s : stages) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

namespace {

constexpr const char* kRead = "storage read";
constexpr const char* kCpu = "CPU decode";
constexpr const char* kH2d = "H2D copy";
constexpr const char* kGpuDecode = "GPU decode";
constexpr const char* kCompute = "GPU compute";
constexpr const char* kD2h = "D2H copy";

struct Flow {
  std::string stage;
  std::vector<sim::LinkId> path;
  double bytes = 0;
};

// The flows of one window on node 0's links, plus the virtual links the pipeline adds.
class Window {
public:
  explicit Window(const topo::Graph& g) {
    capacity_.reserve(g.link_count() + 64);
    for (const auto& l : g.links()) capacity_.push_back(l.capacity.value());
    names_.resize(capacity_.size());
  }

  sim::LinkId add_virtual(Bandwidth capacity, std::string name) {
    capacity_.push_back(capacity.value());
    names_.push_back(std::move(name));
    return static_cast<sim::LinkId>(capacity_.size() - 1);
  }

  void add(const std::string& stage, std::vector<sim::LinkId> path, double bytes) {
    if (bytes <= 0) return;
    flows_.push_back({stage, std::move(path), bytes});
  }

  [[nodiscard]] bool has(const std::string& stage) const {
    return std::any_of(flows_.begin(), flows_.end(), [&](const Flow& f) { return f.stage == stage; });
  }

  // Finish time of each stage's last flow, running the flows of `only` (or all when empty).
  [[nodiscard]] std::map<std::string, double> run(const std::string& only = {}) const {
    sim::TaskGraph tg;
    std::vector<const Flow*> used;
    for (const auto& f : flows_) {
      if (!only.empty() && f.stage != only) continue;
      tg.add_flow(f.path, bytes(f.bytes), Seconds(0));
      used.push_back(&f);
    }
    std::map<std::string, double> finish;
    if (used.empty()) return finish;
    const auto r = sim::simulate(tg, capacity_);
    for (std::size_t i = 0; i < used.size(); ++i) {
      double& t = finish[used[i]->stage];
      t = std::max(t, r.finish[i]);
    }
    return finish;
  }

  // Of the links `stage` uses, the one that takes longest to carry every flow's bytes, and the
  // stages that share it.
  [[nodiscard]] std::pair<sim::LinkId, std::vector<std::string>> busiest(const std::string& stage) const {
    std::map<sim::LinkId, double> load;
    for (const auto& f : flows_) {
      for (const auto l : f.path) load[l] += f.bytes / capacity_[l];
    }
    std::map<sim::LinkId, bool> used;
    for (const auto& f : flows_) {
      if (f.stage == stage) {
        for (const auto l : f.path) used[l] = true;
      }
    }
    sim::LinkId best = 0;
    double most = -1;
    for (const auto& [l, t] : load) {
      if (used.count(l) && t > most) {
        most = t;
        best = l;
      }
    }
    std::vector<std::string> stages;
    for (const auto& f : flows_) {
      if (std::find(f.path.begin(), f.path.end(), best) != f.path.end() &&
          std::find(stages.begin(), stages.end(), f.stage) == stages.end()) {
        stages.push_back(f.stage);
      }
    }
    return {best, stages};
  }

  [[nodiscard]] const std::string& virtual_name(sim::LinkId l) const { return names_[l]; }

private:
  std::vector<double> capacity_;
  std::vector<std::string> names_;  // empty for real links
  std::vector<Flow> flows_;
};

std::vector<sim::LinkId> concat(std::vector<sim::LinkId> a, const std::vector<topo::LinkId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string link_label(const topo::Topology& t, const Window& w, sim::LinkId l) {
  if (l >= t.graph().link_count()) return w.virtual_name(l);
  const auto& link = t.graph().link(l);
  const char* kind = topo::to_string(link.kind);
  return fmt::format("{} -> {} ({}{})", t.graph().name(link.src), t.graph().name(link.dst), kind,
                     link.lanes > 0 && link.kind == topo::LinkKind::pcie ? fmt::format(" x{}", link.lanes) : "");
}

}  // namespace

PipelineResult model_pipeline(const topo::Topology& t, const hw::Catalog& catalog, const InputWorkload& w,
                              const PipelineOptions& o) {
  const auto& node = t.node();
  const auto& spec = t.spec();
  const auto& gpu = t.gpu_spec();
  const auto& cpu = t.cpu_spec();
  const int gpus = node.gpus();
  const int sockets = node.sockets();
  const int batch = o.batch > 0 ? o.batch : w.batch_per_gpu;
  if (o.prefetch < 0) throw InputError({}, "--prefetch", fmt::format("got {}", o.prefetch), "0 or more batches");

  // --- Checks that name the option at fault.
  const bool gpu_decode = o.decode == DecodeOn::gpu;
  if (gpu_decode && !w.gpu_decode) {
    throw InputError({}, "--decode", fmt::format("workload '{}' has no GPU decode figures", w.name),
                     "cpu, or add a gpu_decode section to the workload file");
  }
  if (o.gds) {
    if (o.source != DataSource::local_nvme) {
      throw InputError({}, "--gds",
                       "GPUDirect Storage reads local NVMe; the source is " + std::string(to_string(o.source)),
                       "--source nvme");
    }
    if (!gpu_decode) {
      throw InputError({}, "--gds",
                       "GPUDirect Storage puts the encoded bytes in GPU memory, where the CPU cannot decode them",
                       "--decode gpu");
    }
    if (gpu.vendor != "nvidia" || !gpu.p2p_supported || !spec.p2p) {
      throw InputError(
          {}, "--gds",
          fmt::format("{} cannot take PCIe peer-to-peer DMA from NVMe (GPUDirect Storage needs it)", gpu.display_name),
          "a data-centre NVIDIA GPU with P2P enabled");
    }
  }
  if (o.source == DataSource::local_nvme && node.storage_devices() == 0) {
    throw InputError({}, "--source", fmt::format("{} has no local storage devices", spec.name),
                     "page-cache, network-fs, or a cluster file with node.storage");
  }
  const hw::StorageSpec* netfs = nullptr;
  if (o.source == DataSource::network_fs) {
    netfs = &catalog.storage(o.network_fs.empty() ? "lustre" : o.network_fs, {}, "--network-fs");
    if (netfs->kind != "network-fs") {
      throw InputError({}, "--network-fs",
                       fmt::format("'{}' is {} storage, not a network file system", netfs->name, netfs->kind),
                       "a catalog storage entry of kind network-fs (nfs, lustre)");
    }
    if (node.nics() == 0) {
      throw InputError({}, "--source", fmt::format("{} has no NIC to reach a network file system", spec.name),
                       "nvme or page-cache");
    }
  }
  const auto tflops = gpu.tflops_dense.find(w.precision);
  if (tflops == gpu.tflops_dense.end()) {
    std::vector<std::string> have;
    for (const auto& [p, v] : gpu.tflops_dense) have.push_back(p);
    throw InputError({w.file, 0, 0}, "compute.precision",
                     fmt::format("{} has no dense {} figure in the catalog", gpu.display_name, w.precision),
                     join(have));
  }
  const int total_cores = cpu.cores * sockets;
  // A data-loader worker is one process doing one sample at a time, so it keeps one core busy.
  // The recipe's worker count, when the workload states it, is what runs unless told otherwise.
  const int spare = std::max(1, total_cores - gpus);
  int loader_cores = o.loader_cores > 0             ? o.loader_cores
                     : w.loader_workers_per_gpu > 0 ? std::min(spare, w.loader_workers_per_gpu * gpus)
                                                    : spare;
  if (o.loader_cores > total_cores) {
    throw InputError({}, "--loader-cores", fmt::format("got {}; the node has {} cores", o.loader_cores, total_cores),
                     fmt::format("1 to {}", total_cores));
  }
  loader_cores = std::max(1, loader_cores);

  // --- One window: a batch per GPU, every byte-moving stage a flow.
  Window win(t.graph());
  std::vector<sim::LinkId> dram(static_cast<std::size_t>(sockets));
  for (int s = 0; s < sockets; ++s) {
    dram[static_cast<std::size_t>(s)] =
        win.add_virtual(cpu.memory_bandwidth * cpu.stream_efficiency, fmt::format("socket{} DRAM (reads + writes)", s));
  }
  std::optional<sim::LinkId> netfs_link;
  if (netfs) netfs_link = win.add_virtual(netfs->read, fmt::format("{} client read rate", netfs->name));

  // Storage devices near each socket.
  std::vector<std::vector<int>> storage_of_socket(static_cast<std::size_t>(sockets));
  std::vector<int> all_storage;
  for (int i = 0; i < node.storage_devices(); ++i) {
    storage_of_socket[static_cast<std::size_t>(node.socket_of(node.storage(i)))].push_back(i);
    all_storage.push_back(i);
  }

  const double n = batch;
  const Bytes h2d_per_sample = gpu_decode ? w.h2d_per_sample_gpu_decode : w.h2d_per_sample;
  const double pageable_eff = catalog.pageable_copy().efficiency;
  for (int g = 0; g < gpus; ++g) {
    const topo::DeviceId gd = node.gpu(g);
    const int s = node.socket_of(gd);
    const sim::LinkId mem = dram[static_cast<std::size_t>(s)];
    const double disk = n * w.sample_on_disk.value();

    // Storage read into the loader's memory (or, with GDS, into the GPU).
    if (o.source == DataSource::local_nvme) {
      // The dataset is striped over the drives near the loader's socket (all drives when none
      // is near), as a RAID-0 or a sharded dataset is: each GPU reads from every one of them.
      const auto& near = storage_of_socket[static_cast<std::size_t>(s)].empty()
                             ? all_storage
                             : storage_of_socket[static_cast<std::size_t>(s)];
      const double share = disk / static_cast<double>(near.size());
      for (const int dev : near) {
        if (o.gds) {
          win.add(kRead, node.pcie_path(node.storage(dev), gd).links, share);
        } else {
          win.add(kRead, concat({mem}, node.to_memory(node.storage(dev), s).links), share);
        }
      }
    } else if (o.source == DataSource::page_cache) {
      // Copy out of the page cache: a read and a write of the sample in DRAM.
      win.add(kRead, {mem}, 2 * disk);
    } else {
      win.add(kRead, concat({*netfs_link, mem}, node.to_memory(node.nic(node.nic_of_gpu(g)), s).links), disk);
    }

    // The CPU's memory traffic while decoding and augmenting.
    if (!gpu_decode) win.add(kCpu, {mem}, n * w.cpu_memory_per_sample.value());

    // Host to device: the batch (decoded, or encoded for GPU decode). Pageable memory is first
    // copied by the CPU into the driver's pinned staging buffer: two more DRAM passes, and the
    // copy reaches only a fraction of the pinned rate.
    if (!o.gds) {
      const auto route = node.from_memory(s, gd);
      std::vector<sim::LinkId> path = concat({mem}, route.links);
      const double bytes_h2d = n * h2d_per_sample.value();
      if (o.buffers == HostBuffers::pageable) {
        path.push_back(win.add_virtual(route.bandwidth * pageable_eff, fmt::format("gpu{} pageable staging", g)));
        win.add(kH2d, {mem}, 2 * bytes_h2d);
      }
      win.add(kH2d, std::move(path), bytes_h2d);
    }
    win.add(kD2h, concat(node.to_memory(gd, s).links, {mem}), w.d2h_per_batch.value());
  }

  // --- Stage capacities, samples/s per node.
  const double window_samples = n * gpus;
  const auto loaded_finish = win.run();
  PipelineResult r;
  r.gpus = gpus;
  r.batch = batch;
  r.loader_cores = loader_cores;
  r.overlapped = o.prefetch >= 1;

  auto flow_stage = [&](const char* name, std::string resource, double bytes_per_sample) {
    StageResult st;
    st.name = name;
    st.resource = std::move(resource);
    const auto alone = win.run(name);
    const double ta = alone.count(name) ? alone.at(name) : 0;
    const double tl = loaded_finish.count(name) ? loaded_finish.at(name) : 0;
    st.capacity = ta > 0 ? window_samples / ta : std::numeric_limits<double>::infinity();
    st.loaded = tl > 0 ? window_samples / tl : std::numeric_limits<double>::infinity();
    st.bytes_per_sample = bytes_per_sample;
    if (bytes_per_sample > 0 && std::isfinite(st.loaded)) {
      st.rate = Bandwidth(st.loaded * bytes_per_sample / gpus);
      st.alone = Bandwidth(st.capacity * bytes_per_sample / gpus);
    }
    return st;
  };

  std::vector<StageResult> stages;
  {
    std::string res;
    if (o.source == DataSource::local_nvme) {
      std::map<std::string, int> models;
      for (const auto& p : spec.node.storage) models[p.model] += p.count;
      for (const auto& [m, c] : models) res += (res.empty() ? "" : " + ") + fmt::format("{}x {}", c, m);
      if (o.gds) res += ", GPUDirect Storage";
    } else if (o.source == DataSource::page_cache) {
      res = "page cache (DRAM)";
    } else {
      res = fmt::format("{} over {}", netfs->name, t.network().name);
    }
    stages.push_back(flow_stage(kRead, res, w.sample_on_disk.value()));
  }
  {
    const double per_sample = gpu_decode ? w.gpu_decode->cpu_seconds_per_sample : w.cpu_seconds_per_sample;
    StageResult st;
    st.name = kCpu;
    st.resource = fmt::format("{} of {} cores ({}){}", loader_cores, total_cores, cpu.name,
                              o.loader_cores == 0 && w.loader_workers_per_gpu > 0
                                  ? fmt::format(", {} workers per GPU", w.loader_workers_per_gpu)
                                  : "");
    const double cores_bound = per_sample > 0 ? loader_cores / per_sample : std::numeric_limits<double>::infinity();
    if (win.has(kCpu)) {
      const StageResult mem = flow_stage(kCpu, "", 0);
      st.capacity = std::min(cores_bound, mem.capacity);
      st.loaded = std::min(cores_bound, mem.loaded);
    } else {
      st.capacity = st.loaded = cores_bound;
    }
    if (gpu_decode) st.name = "CPU loading";
    if (std::isfinite(st.capacity)) stages.push_back(st);
  }
  if (!o.gds) {
    const auto route = node.from_memory(node.socket_of(node.gpu(0)), node.gpu(0));
    stages.push_back(flow_stage(
        kH2d, fmt::format("{} PCIe{}", route.label(), o.buffers == HostBuffers::pageable ? ", pageable" : ", pinned"),
        h2d_per_sample.value()));
  }
  const double compute_per_gpu = tflops->second * 1e12 * w.peak_fraction / w.flops_per_sample;
  double gpu_seconds = 1.0 / compute_per_gpu;  // per sample on one GPU's SMs
  if (gpu_decode) {
    StageResult st;
    st.name = kGpuDecode;
    st.resource = w.gpu_decode->hardware_engine ? "hardware decoder" : "SMs (shared with compute)";
    st.capacity = st.loaded = gpus / w.gpu_decode->seconds_per_sample;
    if (w.gpu_decode->hardware_engine) {
      stages.push_back(st);
    } else {
      gpu_seconds += w.gpu_decode->seconds_per_sample;
    }
  }
  {
    StageResult st;
    st.name = kCompute;
    st.resource = fmt::format("{}x {}, {} at {:.0f}% of {:g} TFLOPS", gpus, gpu.name, w.precision,
                              w.peak_fraction * 100, tflops->second);
    if (gpu_decode && !w.gpu_decode->hardware_engine) st.resource += " + decode";
    st.capacity = st.loaded = gpus / gpu_seconds;
    r.compute_capacity = st.capacity;
    stages.push_back(st);
  }
  if (w.d2h_per_batch.value() > 0) stages.push_back(flow_stage(kD2h, "PCIe", w.d2h_per_batch.value() / n));

  // --- Steady state.
  double x = 0;
  std::string bottleneck;
  if (r.overlapped) {
    // Stages overlap; the slowest sets the pace. Copies from pageable memory are synchronous
    // for the launching thread, so they do not overlap that GPU's compute: the two add up.
    x = std::numeric_limits<double>::infinity();
    for (const auto& st : stages) {
      if (st.loaded < x) {
        x = st.loaded;
        bottleneck = st.name;
      }
    }
    if (o.buffers == HostBuffers::pageable && !o.gds) {
      const StageResult* h2d = nullptr;
      const StageResult* comp = nullptr;
      for (const auto& st : stages) {
        if (st.name == kH2d) h2d = &st;
        if (st.name == kCompute) comp = &st;
      }
      const double serial = 1.0 / (1.0 / h2d->loaded + 1.0 / comp->loaded);
      if (serial < x) {
        x = serial;
        bottleneck = std::string(kH2d) + " + " + kCompute;
      }
    }
  } else {
    // No prefetch: each GPU's process loads, copies and computes a batch in turn.
    double per_sample = 0;
    double slowest = std::numeric_limits<double>::infinity();
    for (const auto& st : stages) {
      per_sample += 1.0 / st.capacity;
      if (st.name != kCompute && st.capacity < slowest) {
        slowest = st.capacity;
        bottleneck = st.name;
      }
    }
    x = 1.0 / per_sample;
  }
  for (auto& st : stages) {
    st.utilisation = r.overlapped ? x / st.loaded : x / st.capacity;
    if (st.bytes_per_sample > 0) st.steady = Bandwidth(x * st.bytes_per_sample / gpus);
  }
  r.stages = std::move(stages);
  r.samples_per_second = x;
  r.per_gpu = x / gpus;
  r.bottleneck = bottleneck;
  r.gpu_idle = std::max(0.0, 1.0 - x / r.compute_capacity);
  if (bottleneck == kRead || bottleneck == kH2d || bottleneck == kD2h || bottleneck.starts_with(kH2d)) {
    const auto [link, on] = win.busiest(bottleneck.starts_with(kH2d) ? std::string(kH2d) : bottleneck);
    r.bottleneck_link = link_label(t, win, link);
    if (on.size() > 1) r.bottleneck_link += ", shared by " + join(on, " and ");
  }
  return r;
}

}  // namespace gf::work
