#include "probe/nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gf::probe {

namespace {

// The few NVML declarations this file needs, from the NVML API reference; nvml.h is not part
// of the CUDA toolkit here, and the ABI of these calls has been stable since NVML 10.
using nvmlReturn = int;
using nvmlDevice = void*;
constexpr nvmlReturn kNvmlSuccess = 0;

struct NvmlPciInfo {  // nvmlPciInfo_t (v3)
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
};

// NVML_NVLINK_MAX_LINKS is 18 (Hopper and Blackwell); asking past the device's count fails.
constexpr unsigned kMaxNvlinks = 18;

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

std::string lower_address(const char* bus_id) {
  // NVML writes "00000000:17:00.0"; sysfs and hwloc write "0000:17:00.0".
  std::string s(bus_id);
  if (s.size() == 16 && s.compare(0, 4, "0000") == 0) s = s.substr(4);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

struct Nvml::Api {
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*count)(unsigned*) = nullptr;
  nvmlReturn (*handle)(unsigned, nvmlDevice*) = nullptr;
  nvmlReturn (*name)(nvmlDevice, char*, unsigned) = nullptr;
  nvmlReturn (*pci)(nvmlDevice, NvmlPciInfo*) = nullptr;
  nvmlReturn (*cur_gen)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*max_gen)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*gpu_max_gen)(nvmlDevice, unsigned*) = nullptr;  // device alone (NVML 11.4+), optional
  nvmlReturn (*cur_width)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*max_width)(nvmlDevice, unsigned*) = nullptr;
  nvmlReturn (*nvlink_state)(nvmlDevice, unsigned, int*) = nullptr;
};

std::unique_ptr<Nvml> Nvml::open(std::string& why) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "no NVIDIA driver (libnvidia-ml.so.1 not found)";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  api->init = symbol<decltype(api->init)>(lib, "nvmlInit_v2");
  api->shutdown = symbol<decltype(api->shutdown)>(lib, "nvmlShutdown");
  api->count = symbol<decltype(api->count)>(lib, "nvmlDeviceGetCount_v2");
  api->handle = symbol<decltype(api->handle)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  api->name = symbol<decltype(api->name)>(lib, "nvmlDeviceGetName");
  api->pci = symbol<decltype(api->pci)>(lib, "nvmlDeviceGetPciInfo_v3");
  api->cur_gen = symbol<decltype(api->cur_gen)>(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
  api->max_gen = symbol<decltype(api->max_gen)>(lib, "nvmlDeviceGetMaxPcieLinkGeneration");
  api->gpu_max_gen = symbol<decltype(api->gpu_max_gen)>(lib, "nvmlDeviceGetGpuMaxPcieLinkGeneration");
  api->cur_width = symbol<decltype(api->cur_width)>(lib, "nvmlDeviceGetCurrPcieLinkWidth");
  api->max_width = symbol<decltype(api->max_width)>(lib, "nvmlDeviceGetMaxPcieLinkWidth");
  api->nvlink_state = symbol<decltype(api->nvlink_state)>(lib, "nvmlDeviceGetNvLinkState");
  if (!api->init || !api->shutdown || !api->count || !api->handle || !api->name) {
    why = "libnvidia-ml.so.1 lacks nvmlInit_v2 or the device calls (driver too old)";
    dlclose(lib);
    return nullptr;
  }
  if (const nvmlReturn rc = api->init(); rc != kNvmlSuccess) {
    why = "nvmlInit failed (error " + std::to_string(rc) + "): NVIDIA driver not loaded";
    dlclose(lib);
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(lib, std::move(api)));
}

Nvml::Nvml(void* lib, std::unique_ptr<Api> api) : lib_(lib), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(lib_);
}

std::vector<GpuInfo> Nvml::gpus() const {
  std::vector<GpuInfo> out;
  unsigned n = 0;
  if (api_->count(&n) != kNvmlSuccess) return out;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice dev = nullptr;
    if (api_->handle(i, &dev) != kNvmlSuccess) continue;
    GpuInfo g;
    g.index = static_cast<int>(i);
    char name[96] = {};
    if (api_->name(dev, name, sizeof(name)) == kNvmlSuccess) g.name = name;
    NvmlPciInfo pci{};
    if (api_->pci && api_->pci(dev, &pci) == kNvmlSuccess) g.pci_address = lower_address(pci.busId);
    unsigned v = 0;
    if (api_->max_gen && api_->max_gen(dev, &v) == kNvmlSuccess) g.pcie.max_generation = static_cast<int>(v);
    // The GPU's own maximum, when NVML has it, so a Gen5 GPU in a Gen4 slot shows as Gen5 capable.
    if (api_->gpu_max_gen && api_->gpu_max_gen(dev, &v) == kNvmlSuccess) {
      g.pcie.max_generation = std::max(g.pcie.max_generation, static_cast<int>(v));
    }
    if (api_->max_width && api_->max_width(dev, &v) == kNvmlSuccess) g.pcie.max_width = static_cast<int>(v);
    if (api_->nvlink_state) {
      int active = 0;
      bool any = false;
      for (unsigned link = 0; link < kMaxNvlinks; ++link) {
        int state = 0;
        if (api_->nvlink_state(dev, link, &state) != kNvmlSuccess) continue;
        any = true;
        active += state != 0 ? 1 : 0;
      }
      g.nvlinks_active = any ? active : 0;
    }
    out.push_back(g);
  }
  refresh_links(out);
  return out;
}

void Nvml::refresh_links(std::vector<GpuInfo>& gpus) const {
  for (auto& g : gpus) {
    nvmlDevice dev = nullptr;
    if (api_->handle(static_cast<unsigned>(g.index), &dev) != kNvmlSuccess) continue;
    unsigned v = 0;
    if (api_->cur_gen && api_->cur_gen(dev, &v) == kNvmlSuccess) g.pcie.generation = static_cast<int>(v);
    if (api_->cur_width && api_->cur_width(dev, &v) == kNvmlSuccess) g.pcie.width = static_cast<int>(v);
  }
}

}  // namespace gf::probe
