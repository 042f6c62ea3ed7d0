#pragma once
// A Kubernetes node list (`kubectl get nodes -o json`) with NVIDIA GPU feature discovery labels
// turned into a node list for `gpufabric schedule --nodes-file` (sn,cpu_milli,memory_mib,gpu,model).
// A node's GPUs are its `nvidia.com/gpu.count` label (physical GPUs under the none and mixed MIG
// strategies), else its allocatable `nvidia.com/gpu` over `nvidia.com/gpu.replicas` (time-slicing
// advertises each GPU that many times); under the single MIG strategy the MIG devices are turned
// back into GPUs by the profile's instances per GPU. The model is the catalog GPU that
// `nvidia.com/gpu.product` names, where the lookup knows it, else the label as it is, with a
// warning. Nodes without NVIDIA GPUs are counted and left out.
#include <functional>
#include <string>

#include "sched/import/import_report.hpp"

namespace gf::sched {

inline constexpr const char* kNodesCommand = "kubectl get nodes -o json";

// The catalog GPU a product name (nvidia-smi's, as GFD labels it: "NVIDIA-H100-80GB-HBM3") is, or
// "" when the catalog has none.
using GpuModelLookup = std::function<std::string(const std::string& product)>;

// Throws InputError (file, the item's line, its field path) on JSON that is not a List of Nodes,
// a bad quantity or label, or a list with no GPU node.
ImportedNodes import_k8s_nodes(const std::string& text, const std::string& file, const GpuModelLookup& catalog_gpu);

}  // namespace gf::sched
