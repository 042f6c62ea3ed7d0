#include "work/kernel_launch.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::work {

namespace {

constexpr const char* kLaunchFile = "data/compute/kernel_launch.yaml";

HalfLayerKernels read_half_layer(const Fields& parent, const char* key) {
  const Fields f(parent.node(key), parent.file(), parent.field(key),
                 {"forward_gemm", "forward_other", "backward_gemm", "backward_other"});
  HalfLayerKernels h;
  h.forward_gemm = static_cast<double>(f.integer("forward_gemm", 0, 1000));
  h.forward_other = static_cast<double>(f.integer("forward_other", 0, 1000));
  h.backward_gemm = static_cast<double>(f.integer("backward_gemm", 0, 1000));
  h.backward_other = static_cast<double>(f.integer("backward_other", 0, 1000));
  return h;
}

}  // namespace

KernelLaunch KernelLaunch::parse(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields top(root, file, "kernel_launch", {"version", "device_floor_us", "host_interval_us", "layer_kernels"});
  KernelLaunch out;
  out.device_floor_s_ = top.physical("device_floor_us", 1e-6, physical::latency);
  out.host_interval_s_ = top.physical("host_interval_us", 1e-6, physical::latency);
  bool fused = false, eager = false;
  for (const YAML::Node& n : as_list(top.node("layer_kernels"), file, "layer_kernels")) {
    const Fields f(n, file, "layer_kernels[]", {"kernels", "source", "note", "attention", "ffn"});
    const std::string kind = f.choice("kernels", {"fused", "eager"});
    if ((kind == "fused" && fused) || (kind == "eager" && eager))
      f.fail("kernels", "'" + kind + "' is given twice", "one entry each for fused and eager");
    LayerKernels& target = kind == "fused" ? out.fused_ : out.eager_;
    (kind == "fused" ? fused : eager) = true;
    (void)f.text("source");  // every count is cited
    target.attention = read_half_layer(f, "attention");
    target.ffn = read_half_layer(f, "ffn");
  }
  if (!fused || !eager)
    top.fail("layer_kernels", std::string("has no entry for ") + (fused ? "eager" : "fused") + " kernels",
             "one entry each with kernels: fused and kernels: eager");
  return out;
}

const KernelLaunch& KernelLaunch::builtin() {
  static const KernelLaunch k = parse(std::string(data::file(kLaunchFile)), kLaunchFile);
  return k;
}

double launch_bound_seconds(double device_s, double other, double all, const KernelLaunch& k) {
  return std::max(device_s + other * k.device_floor_s(), all * k.host_interval_s());
}

}  // namespace gf::work
