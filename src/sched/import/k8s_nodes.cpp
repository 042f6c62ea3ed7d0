#include "sched/import/k8s_nodes.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "sched/import/k8s_list.hpp"
#include "sched/import/k8s_quantity.hpp"
#include "sched/mig_layout.hpp"
#include "sched/trace_reader.hpp"

namespace gf::sched {

namespace {

std::optional<long> label_count(const K8sItem& item, const std::string& key) {
  const auto v = item.text({"metadata", "labels", key}, "a whole number");
  if (!v) return std::nullopt;
  long n = 0;
  const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (v->empty() || ec != std::errc() || p != v->data() + v->size() || n < 0 || n > 1'000'000)
    item.fail(item.field({"metadata", "labels"}) + "." + key, fmt::format("'{}' is not a count", *v), "a whole number");
  return n;
}

// A quantity from status.allocatable, else status.capacity, at most `max`; nullopt when neither
// has it.
std::optional<double> status_quantity(const K8sItem& item, const std::string& key, double max) {
  for (const char* part : {"allocatable", "capacity"}) {
    const nlohmann::json* v = item.find({"status", part, key});
    if (v == nullptr) continue;
    const std::string field = item.field({"status", part}) + "." + key;
    std::optional<double> q;
    if (v->is_string()) q = k8s_quantity(v->get<std::string>());
    if (v->is_number() && v->get<double>() >= 0) q = v->get<double>();
    if (!q || *q > max)
      item.fail(field, fmt::format("{} is not a quantity up to {:g}", v->dump(), max),
                "a Kubernetes quantity, e.g. 8, 1900m, 512Gi");
    return q;
  }
  return std::nullopt;
}

struct Product {
  std::string base;     // "NVIDIA-A100-SXM4-40GB"
  std::string profile;  // "1g.5gb" under the single MIG strategy
};

// GFD appends "-MIG-<profile>" under the single MIG strategy and "-SHARED" under time-slicing
// with renamed resources.
Product split_product(std::string label) {
  Product p;
  if (label.ends_with("-SHARED")) label.resize(label.size() - 7);
  if (const auto mig = label.find("-MIG-"); mig != std::string::npos) {
    p.profile = label.substr(mig + 5);
    label.resize(mig);
  }
  p.base = label;
  return p;
}

std::optional<Node> read_node(const K8sItem& item, const GpuModelLookup& catalog_gpu, ImportReport& report,
                              std::set<std::string>& unknown) {
  const auto name = item.object_name({"metadata", "name"});
  if (!name) item.fail(item.field({"metadata", "name"}), "is missing", "the node's name");
  const auto product_label = item.text({"metadata", "labels", "nvidia.com/gpu.product"}, "a GPU product name");
  if (product_label) {
    // A Kubernetes label value: at most 63 letters, digits, '-', '_' and '.'.
    const bool ok =
        product_label->size() <= 63 && std::all_of(product_label->begin(), product_label->end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        });
    if (!ok)
      item.fail(item.field({"metadata", "labels"}) + ".nvidia.com/gpu.product",
                fmt::format("'{}' is not a label value", *product_label),
                "letters, digits, '-', '_' and '.', at most 63 characters");
  }
  const auto count_label = label_count(item, "nvidia.com/gpu.count");
  const auto devices = status_quantity(item, "nvidia.com/gpu", 1e6);
  if (!count_label.value_or(0) && !devices.value_or(0)) {
    report.skip("nodes without NVIDIA GPUs");
    return std::nullopt;
  }
  Node n;
  n.name = *name;
  const Product product = split_product(product_label.value_or(""));
  long gpus = 0;
  if (count_label) {
    gpus = *count_label;
  } else {
    const long replicas = std::max(1L, label_count(item, "nvidia.com/gpu.replicas").value_or(1));
    gpus = std::lround(std::floor(*devices)) / replicas;
  }
  const std::string model = product.base.empty() ? std::string() : catalog_gpu(product.base);
  if (!product.profile.empty()) {
    // The single MIG strategy: the count is of MIG devices, all of one profile.
    const MigTable* table = model.empty() ? nullptr : mig_table(model);
    const MigProfileSlots* slots = table == nullptr ? nullptr : table->find(product.profile);
    if (slots != nullptr && slots->max_instances > 0 && gpus % slots->max_instances == 0) {
      gpus /= slots->max_instances;
    } else {
      report.warnings.push_back(
          fmt::format("{}: {} MIG {} devices (single strategy) could not be turned back into GPUs; counted as GPUs",
                      n.name, gpus, product.profile));
    }
  }
  if (gpus > kMaxGpusPerPod)
    item.fail(item.field({"metadata", "labels"}) + ".nvidia.com/gpu.count", fmt::format("{} GPUs", gpus),
              "0 to 64 GPUs per node");
  if (gpus == 0) {
    report.skip("nodes without NVIDIA GPUs");
    return std::nullopt;
  }
  n.gpus.resize(static_cast<std::size_t>(gpus));
  n.model = !model.empty() ? model : !product.base.empty() ? product.base : "nvidia-gpu";
  if (model.empty()) unknown.insert(product.base.empty() ? "(no nvidia.com/gpu.product label)" : product.base);
  n.cpu_milli = std::lround(status_quantity(item, "cpu", kMaxCpuMilli / 1000.0).value_or(0) * 1000);
  n.memory_mib =
      std::lround(std::floor(status_quantity(item, "memory", kMaxMemoryMib * 1048576.0).value_or(0) / 1048576));
  n.mig_table = mig_table(n.model);
  n.leaf = 0;
  return n;
}

}  // namespace

ImportedNodes import_k8s_nodes(const std::string& text, const std::string& file, const GpuModelLookup& catalog_gpu) {
  const K8sList list = read_k8s_list(text, file, "Node", kNodesCommand);
  ImportedNodes out;
  std::set<std::string> names, unknown;
  for (std::size_t i = 0; i < list.items.size(); ++i) {
    const K8sItem item(list, i);
    ++out.report.records;
    auto n = read_node(item, catalog_gpu, out.report, unknown);
    if (!n) continue;
    if (!names.insert(n->name).second)
      item.fail(item.field({"metadata", "name"}), fmt::format("'{}' appears twice", n->name), "one entry per node");
    out.nodes.push_back(std::move(*n));
  }
  for (const auto& u : unknown)
    out.report.warnings.push_back(fmt::format(
        "GPU '{}' is not in the catalog (gpufabric catalog): kept by that name; its nodes take only requests that name "
        "no GPU model, and MIG requests cannot be placed there",
        u));
  if (out.nodes.empty()) {
    std::string why;
    for (const auto& [reason, n] : out.report.skipped) why += fmt::format("; {} {}", n, reason);
    throw InputError(
        {file, 0, 0}, "items", fmt::format("no node with NVIDIA GPUs ({} nodes read{})", out.report.records, why),
        "nodes with an nvidia.com/gpu capacity or an nvidia.com/gpu.count label (NVIDIA device plugin, GFD)");
  }
  return out;
}

}  // namespace gf::sched
