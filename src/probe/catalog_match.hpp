#pragma once
// Maps what the machine reports (NVML GPU names, PCI IDs, /proc/cpuinfo model strings) to the
// catalog's entry names, so --compare can look up what the part should do. No match is an
// empty string: the comparison then says "not in catalog" rather than guessing.
#include <string>

#include "hw/catalog.hpp"

namespace gf::probe {

// NVML/nvidia-smi names, e.g. "NVIDIA H100 80GB HBM3" -> "h100-sxm5".
std::string gpu_model_for_name(const std::string& name);

// The pci.ids name of an NVIDIA GPU's PCI device ID, for the catalog's GPUs only ("" otherwise):
// how a GPU is named when there is no driver to ask.
std::string nvidia_gpu_name_for_pci(unsigned device);

// PCI vendor and device IDs of the NICs in the catalog, from the PCI ID repository (pci.ids).
std::string nic_model_for_pci(unsigned vendor, unsigned device);

// "Intel(R) Xeon(R) Platinum 8480C" -> "xeon-8480c": the catalog entry whose model number
// appears in the string.
std::string cpu_model_for_name(const std::string& model, const hw::Catalog& catalog);

}  // namespace gf::probe
