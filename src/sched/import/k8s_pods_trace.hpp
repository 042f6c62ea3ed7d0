#pragma once
// A Kubernetes pod list (`kubectl get pods -A -o json`) turned into jobs for `gpufabric schedule
// --trace`: each pod that asked for NVIDIA GPUs (`nvidia.com/gpu`, or one MIG device
// `nvidia.com/mig-<profile>`) and ran becomes a one-pod job, submitted at its creationTimestamp
// less the first pod's, running from status.startTime to its containers' last terminated
// finishedAt. Pods without GPU requests, that never started or are still running are counted and
// left out.
#include <string>

#include "sched/import/import_report.hpp"

namespace gf::sched {

inline constexpr const char* kPodsCommand = "kubectl get pods -A -o json";

// Throws InputError (file, the item's line, its field path, what would be valid) on JSON that is
// not a List of Pods, a bad timestamp or quantity, or a list with no GPU pod that ran.
ImportedTrace import_k8s_pods(const std::string& text, const std::string& file);

}  // namespace gf::sched
