#include "work/what_if.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace gf::work {

namespace {

// The throughput the rest of the pipeline could take if `skip` were infinitely fast.
double demand_without(const PipelineResult& r, const std::string& skip) {
  double x = r.compute_capacity;
  for (const auto& s : r.stages) {
    if (s.name != skip && s.name != "D2H copy") x = std::min(x, r.overlapped ? s.loaded : s.capacity);
  }
  return x;
}

std::string rate(double samples_per_second) { return fmt::format("{:.0f} samples/s", samples_per_second); }

std::string gbps(Bandwidth b) { return fmt::format("{:.1f} GB/s", in_GBps(b)); }

}  // namespace

int cores_needed(const InputWorkload& w, const PipelineOptions& o, double samples_per_second) {
  const double per_sample =
      o.decode == DecodeOn::gpu && w.gpu_decode ? w.gpu_decode->cpu_seconds_per_sample : w.cpu_seconds_per_sample;
  return static_cast<int>(std::ceil(samples_per_second * per_sample - 1e-9));
}

std::vector<std::string> what_ifs(const topo::Topology& t, const hw::Catalog& catalog, const InputWorkload& w,
                                  const PipelineOptions& o, const PipelineResult& r) {
  std::vector<std::string> out;
  const auto rerun = [&](PipelineOptions changed) { return model_pipeline(t, catalog, w, changed); };
  const std::string gpus = fmt::format("{} {}", r.gpus, t.gpu_spec().name);

  // CPU decode short of what the GPUs could take: how many cores it would need.
  if (const auto* cpu = r.stage("CPU decode"); cpu && (r.bottleneck == "CPU decode")) {
    const double want = demand_without(r, "CPU decode");
    const int need = cores_needed(w, o, want);
    const int total = t.cpu_spec().cores * t.node().sockets();
    const int spare = total - r.gpus;  // one core per GPU stays with its training process
    std::string fix;
    if (need <= spare) {
      fix = fmt::format("; {} loader workers per GPU would do it (--loader-cores {})", (need + r.gpus - 1) / r.gpus,
                        need);
    } else {
      fix = fmt::format("; even all {} spare cores fall short", spare);
    }
    out.push_back(fmt::format("CPU decode needs {} cores to feed {} at {}; it runs on {} of the node's {}{}", need,
                              gpus, rate(want), r.loader_cores, total, fix));
  }
  if (o.decode == DecodeOn::cpu && w.gpu_decode) {
    PipelineOptions g = o;
    g.decode = DecodeOn::gpu;
    const auto alt = rerun(g);
    out.push_back(fmt::format("decoding on the GPUs ({}) {} throughput from {} to {}; the bottleneck {}",
                              w.gpu_decode->hardware_engine ? "hardware decoder" : "on the SMs",
                              alt.samples_per_second >= r.samples_per_second ? "raises" : "lowers",
                              rate(r.samples_per_second), rate(alt.samples_per_second),
                              alt.bottleneck == r.bottleneck ? "stays " + r.bottleneck
                                                             : "moves from " + r.bottleneck + " to " + alt.bottleneck));
  }
  if (o.buffers == HostBuffers::pageable) {
    PipelineOptions p = o;
    p.buffers = HostBuffers::pinned;
    const auto alt = rerun(p);
    const auto* a = r.stage("H2D copy");
    const auto* b = alt.stage("H2D copy");
    if (a && b && a->alone && b->alone) {
      out.push_back(
          fmt::format("pinned memory raises H2D from {} to {} per GPU and lets copies overlap compute: {} -> {}",
                      gbps(*a->alone), gbps(*b->alone), rate(r.samples_per_second), rate(alt.samples_per_second)));
    }
  }
  if (o.prefetch == 0) {
    PipelineOptions p = o;
    p.prefetch = 2;
    const auto alt = rerun(p);
    out.push_back(
        fmt::format("prefetching 2 batches overlaps loading with compute: {} -> {}, GPU idle {:.0f}% -> {:.0f}%",
                    rate(r.samples_per_second), rate(alt.samples_per_second), r.gpu_idle * 100, alt.gpu_idle * 100));
  }
  if (r.bottleneck == "storage read" && o.source != DataSource::page_cache) {
    const auto* s = r.stage("storage read");
    const double want = demand_without(r, "storage read");
    const double need_GBps = want * w.sample_on_disk.value() / 1e9;
    out.push_back(fmt::format("storage delivers {:.1f} GB/s per node; the rest of the pipeline could take {:.1f} GB/s",
                              s->loaded * w.sample_on_disk.value() / 1e9, need_GBps));
    PipelineOptions p = o;
    p.source = DataSource::page_cache;
    p.gds = false;
    const auto alt = rerun(p);
    out.push_back(fmt::format("with the dataset in the page cache: {} -> {}", rate(r.samples_per_second),
                              rate(alt.samples_per_second)));
  }
  if (o.source == DataSource::local_nvme && !o.gds && o.decode == DecodeOn::gpu && t.gpu_spec().vendor == "nvidia" &&
      t.gpu_spec().p2p_supported && t.spec().p2p) {
    PipelineOptions p = o;
    p.gds = true;
    const auto alt = rerun(p);
    out.push_back(fmt::format("GPUDirect Storage (NVMe straight to GPU memory) would give {} instead of {}",
                              rate(alt.samples_per_second), rate(r.samples_per_second)));
  }
  if (r.bottleneck == "GPU compute") {
    double next = std::numeric_limits<double>::infinity();
    std::string name;
    for (const auto& s : r.stages) {
      const double c = r.overlapped ? s.loaded : s.capacity;
      if (s.name != "GPU compute" && c < next) {
        next = c;
        name = s.name;
      }
    }
    if (!name.empty()) {
      const double headroom = next / r.samples_per_second;
      out.push_back(fmt::format(
          "the GPUs are the bottleneck; the input pipeline could feed {} ({} is next, at {:.1f}% "
          "load)",
          headroom >= 10 ? fmt::format("{:.0f}x as fast", headroom) : fmt::format("{:.0f}% more", (headroom - 1) * 100),
          name, 100 / headroom));
    }
  }
  return out;
}

}  // namespace gf::work
