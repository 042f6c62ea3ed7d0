#pragma once
// NVML, loaded at run time with dlopen("libnvidia-ml.so.1"): the library ships with the NVIDIA
// driver, not the CUDA toolkit, so a machine without the driver simply has no NVML. That is
// "no NVIDIA driver", not an error.
#include <memory>
#include <string>
#include <vector>

#include "probe/profile.hpp"

namespace gf::probe {

class Nvml {
public:
  // nullptr when the library or nvmlInit is missing; `why` says which.
  static std::unique_ptr<Nvml> open(std::string& why);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Name, PCI address, current and maximum PCIe generation and width, active NVLinks.
  [[nodiscard]] std::vector<GpuInfo> gpus() const;
  // Re-reads the current PCIe generation and width (call while copies run: idle GPUs downtrain).
  void refresh_links(std::vector<GpuInfo>& gpus) const;

  struct Api;

private:
  Nvml(void* lib, std::unique_ptr<Api> api);
  void* lib_;
  std::unique_ptr<Api> api_;
};

}  // namespace gf::probe
