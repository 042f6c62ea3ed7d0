#include "sched/import/k8s_pods_trace.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "sched/cluster_state.hpp"
#include "sched/import/iso_time.hpp"
#include "sched/import/k8s_list.hpp"
#include "sched/import/k8s_quantity.hpp"
#include "sched/import/trace_writer.hpp"
#include "sched/trace_reader.hpp"

namespace gf::sched {

namespace {

constexpr const char* kGpu = "nvidia.com/gpu";
constexpr const char* kMigPrefix = "nvidia.com/mig-";

// What one container, or the whole pod, asks for.
struct Demand {
  double gpus = 0;
  double cpu = 0;                     // cores
  double memory = 0;                  // bytes
  std::map<std::string, double> mig;  // profile -> devices
};

double quantity(const K8sItem& item, const nlohmann::json& v, const std::string& field) {
  std::optional<double> q;
  if (v.is_number()) q = v.get<double>() >= 0 ? std::optional<double>(v.get<double>()) : std::nullopt;
  if (v.is_string()) q = k8s_quantity(v.get<std::string>());
  if (!q || !std::isfinite(*q) || *q > 1e18)
    item.fail(field, fmt::format("{} is not a quantity", v.dump()), "a Kubernetes quantity, e.g. 1, 500m, 64Gi");
  return *q;
}

// A container's requests, each falling back to its limit (Kubernetes copies a limit into an
// absent request; extended resources such as GPUs may be given as limits only).
Demand container_demand(const K8sItem& item, const nlohmann::json& c, const std::string& where) {
  Demand d;
  const nlohmann::json* requests = item.find_in(c, {"resources", "requests"});
  const nlohmann::json* limits = item.find_in(c, {"resources", "limits"});
  std::map<std::string, std::pair<const nlohmann::json*, std::string>> values;
  for (const auto& [source, name] : {std::pair{limits, "limits"}, {requests, "requests"}}) {
    if (source == nullptr) continue;
    if (!source->is_object()) item.fail(where + ".resources." + name, "is not an object", "resource: quantity pairs");
    for (const auto& [k, v] : source->items()) values[k] = {&v, where + ".resources." + name + "." + k};
  }
  for (const auto& [key, entry] : values) {
    const auto& [v, field] = entry;
    if (key == kGpu) {
      d.gpus = quantity(item, *v, field);
      if (d.gpus != std::floor(d.gpus)) item.fail(field, "is not a whole number", "whole GPUs");
    } else if (key.starts_with(kMigPrefix)) {
      d.mig[key.substr(std::string(kMigPrefix).size())] += quantity(item, *v, field);
    } else if (key == "cpu") {
      d.cpu = quantity(item, *v, field);
    } else if (key == "memory") {
      d.memory = quantity(item, *v, field);
    }
  }
  return d;
}

// The pod's effective demand as the scheduler counts it: its containers together, or its largest
// init container if that is larger (init containers run one at a time, before the others).
Demand pod_demand(const K8sItem& item) {
  Demand sum, init;
  for (const char* list : {"containers", "initContainers"}) {
    const nlohmann::json* cs = item.find({"spec", list});
    if (cs == nullptr) {
      if (list == std::string("containers"))
        item.fail(item.field({"spec", "containers"}), "is missing", "the pod's containers");
      continue;
    }
    if (!cs->is_array()) item.fail(item.field({"spec", list}), "is not an array", "a list of containers");
    for (std::size_t i = 0; i < cs->size(); ++i) {
      const Demand c = container_demand(item, (*cs)[i], fmt::format("{}[{}]", item.field({"spec", list}), i));
      Demand& into = list == std::string("containers") ? sum : init;
      const bool add = list == std::string("containers");
      into.gpus = add ? into.gpus + c.gpus : std::max(into.gpus, c.gpus);
      into.cpu = add ? into.cpu + c.cpu : std::max(into.cpu, c.cpu);
      into.memory = add ? into.memory + c.memory : std::max(into.memory, c.memory);
      for (const auto& [p, n] : c.mig) into.mig[p] = add ? into.mig[p] + n : std::max(into.mig[p], n);
    }
  }
  sum.gpus = std::max(sum.gpus, init.gpus);
  sum.cpu = std::max(sum.cpu, init.cpu);
  sum.memory = std::max(sum.memory, init.memory);
  for (const auto& [p, n] : init.mig) sum.mig[p] = std::max(sum.mig[p], n);
  std::erase_if(sum.mig, [](const auto& e) { return e.second <= 0; });
  return sum;
}

double timestamp(const K8sItem& item, std::initializer_list<std::string> path, const std::string& text) {
  const auto t = iso_seconds(text);
  if (!t)
    item.fail(item.field(path), fmt::format("'{}' is not a timestamp", text), "RFC 3339, e.g. 2025-03-19T20:40:47Z");
  return *t;
}

// The last finishedAt of the pod's containers, when every container has terminated.
std::optional<double> finished(const K8sItem& item) {
  const nlohmann::json* statuses = item.find({"status", "containerStatuses"});
  if (statuses == nullptr || !statuses->is_array() || statuses->empty()) return std::nullopt;
  std::optional<double> last;
  for (std::size_t i = 0; i < statuses->size(); ++i) {
    const nlohmann::json* at = item.find_in((*statuses)[i], {"state", "terminated", "finishedAt"});
    if (at == nullptr) return std::nullopt;  // a container still runs or waits
    const std::string field =
        fmt::format("{}[{}].state.terminated.finishedAt", item.field({"status", "containerStatuses"}), i);
    if (!at->is_string()) item.fail(field, "is not a string", "RFC 3339, e.g. 2025-03-19T20:40:47Z");
    const auto t = iso_seconds(at->get<std::string>());
    if (!t)
      item.fail(field, fmt::format("'{}' is not a timestamp", at->get<std::string>()),
                "RFC 3339, e.g. 2025-03-19T20:40:47Z");
    last = std::max(last.value_or(*t), *t);
  }
  return last;
}

std::optional<Job> read_pod(const K8sItem& item, ImportReport& report, std::string& created_text) {
  const auto name = item.object_name({"metadata", "name"});
  if (!name) item.fail(item.field({"metadata", "name"}), "is missing", "the pod's name");
  const auto ns = item.object_name({"metadata", "namespace"});
  const Demand d = pod_demand(item);
  if (d.cpu * 1000 > static_cast<double>(kMaxCpuMilli) || d.memory / 1048576 > static_cast<double>(kMaxMemoryMib))
    item.fail(item.field({"spec", "containers"}), fmt::format("ask for {:.3g} CPUs and {:.3g} bytes", d.cpu, d.memory),
              fmt::format("at most {} CPUs and {} MiB per pod", kMaxCpuMilli / 1000, kMaxMemoryMib));
  if (d.gpus <= 0 && d.mig.empty()) {
    report.skip("pods without GPU requests");
    return std::nullopt;
  }
  if (d.gpus > 0 && !d.mig.empty()) {
    report.skip("pods asking for whole GPUs and MIG devices at once (a trace row holds one kind)");
    return std::nullopt;
  }
  if (d.mig.size() > 1 || (!d.mig.empty() && d.mig.begin()->second != 1)) {
    report.skip("pods asking for several MIG devices (a trace row holds one per pod)");
    return std::nullopt;
  }
  if (d.gpus > static_cast<double>(kMaxGpusPerPod)) {
    report.skip(fmt::format("pods asking for more than {} GPUs", kMaxGpusPerPod));
    return std::nullopt;
  }
  const auto created = item.text({"metadata", "creationTimestamp"}, "RFC 3339");
  if (!created)
    item.fail(item.field({"metadata", "creationTimestamp"}), "is missing", "when the pod was created, RFC 3339");
  const auto started = item.text({"status", "startTime"}, "RFC 3339");
  if (!started) {
    report.skip("GPU pods that never started (Pending)");
    return std::nullopt;
  }
  const auto end = finished(item);
  if (!end) {
    report.skip("GPU pods still running (no finishedAt yet)");
    return std::nullopt;
  }
  Job j;
  j.name = ns && !ns->empty() ? *ns + "/" + *name : *name;
  j.submit = timestamp(item, {"metadata", "creationTimestamp"}, *created);
  const double start = timestamp(item, {"status", "startTime"}, *started);
  if (*end < start)
    item.fail(item.field({"status", "containerStatuses"}), "a container finished before status.startTime",
              "finishedAt at or after startTime");
  j.duration = *end - start;
  j.recorded_queue = std::max(0.0, start - j.submit);
  j.pod.gpus = static_cast<int>(d.gpus);
  if (!d.mig.empty()) {
    j.pod.mig = d.mig.begin()->first;
    const bool profile_chars = std::all_of(j.pod.mig.begin(), j.pod.mig.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+';
    });
    if (!profile_chars || mig_milli(j.pod.mig) <= 0) {
      report.warnings.push_back(fmt::format("{}: a MIG resource that names no profile; left out", j.name));
      report.skip("pods with an unknown MIG resource");
      return std::nullopt;
    }
  }
  j.pod.cpu_milli = std::lround(d.cpu * 1000);
  j.pod.memory_mib = std::lround(std::ceil(d.memory / 1048576));
  const auto qos = item.text({"status", "qosClass"}, "Guaranteed, Burstable or BestEffort");
  j.qos = qos == "BestEffort" ? "BE" : qos.value_or("");
  created_text = *created;
  return j;
}

}  // namespace

ImportedTrace import_k8s_pods(const std::string& text, const std::string& file) {
  const K8sList list = read_k8s_list(text, file, "Pod", kPodsCommand);
  ImportedTrace out;
  std::vector<std::pair<Job, std::string>> jobs;
  std::map<std::string, int> names;
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const K8sItem item(list, i);
    ++out.report.records;
    std::string created;
    auto j = read_pod(item, out.report, created);
    if (!j) continue;
    j->line = list.lines[i];
    if (++names[j->name] > 1)
      item.fail(item.field({"metadata", "name"}), fmt::format("'{}' appears twice", j->name), "one entry per pod");
    jobs.emplace_back(std::move(*j), created);
  }
  finish_trace(std::move(jobs), file,
               {"GPU pod that ran", "pods with nvidia.com/gpu or nvidia.com/mig-* requests that started and finished",
                "metadata.creationTimestamp", "status.containerStatuses"},
               out);
  return out;
}

}  // namespace gf::sched
