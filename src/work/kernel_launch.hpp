#pragma once
// The per-kernel costs a training step pays beside its kernels' own work (issue 35): each
// non-GEMM kernel's device-side floor (block scheduling, ramp-up and tail, which a
// bytes / bandwidth time leaves out), and the host's enqueue interval: eager PyTorch launches one
// kernel at a time from Python, and the GPU starves wherever its kernels are, on the whole,
// shorter than the host takes to enqueue them. Figures and kernel counts in
// data/compute/kernel_launch.yaml, cited; the model in docs/kernel-launch.md.
#include <string>
#include <vector>

#include "work/training_memory.hpp"

namespace gf::work {

// Kernels one half of a transformer layer launches for one micro-batch.
struct HalfLayerKernels {
  double forward_gemm = 0;
  double forward_other = 0;
  double backward_gemm = 0;
  double backward_other = 0;
};

struct LayerKernels {
  HalfLayerKernels attention;
  HalfLayerKernels ffn;
};

class KernelLaunch {
public:
  // The built-in data file.
  static const KernelLaunch& builtin();
  // Reads a file of that format (an InputError at file:line when malformed).
  static KernelLaunch parse(const std::string& text, const std::string& file);

  [[nodiscard]] double device_floor_s() const { return device_floor_s_; }
  [[nodiscard]] double host_interval_s() const { return host_interval_s_; }
  // The kernels of a layer as the framework runs its element-wise operators.
  [[nodiscard]] const LayerKernels& layer(Kernels k) const { return k == Kernels::eager ? eager_ : fused_; }

private:
  double device_floor_s_ = 0;
  double host_interval_s_ = 0;
  LayerKernels fused_;
  LayerKernels eager_;
};

// A stretch of kernels run back to back in one stream: `device_s` of their own work (GEMMs with
// their fixed cost, the rest at their memory-bound time), `other` non-GEMM kernels each paying
// the device floor, and `all` kernels the host enqueues one by one. The host runs ahead through
// the stream's queue, so it shows only where it is slower than the device over the whole stretch.
double launch_bound_seconds(double device_s, double other, double all, const KernelLaunch& k);

}  // namespace gf::work
