#include "band/band_class.hpp"

#include <cctype>

namespace gf::band {

std::string gpu_family(std::string_view gpu_name) {
  // The part and its form factor without the memory size ("a100-sxm4-80gb" and "a100-sxm4-40gb"
  // are one family, "h100-pcie" is not "h100-sxm5": its power, clocks and links differ).
  std::size_t end = gpu_name.size();
  for (std::size_t i = 0; i + 1 < gpu_name.size(); ++i) {
    if (gpu_name[i] != '-' || !std::isdigit(static_cast<unsigned char>(gpu_name[i + 1]))) continue;
    std::size_t j = i + 1;
    while (j < gpu_name.size() && std::isdigit(static_cast<unsigned char>(gpu_name[j]))) ++j;
    if (gpu_name.substr(j, 2) == "gb") {
      end = i;
      break;
    }
  }
  std::string f(gpu_name.substr(0, end));
  for (auto& c : f) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return f;
}

// Bands of model size where the compute model's error changes character: small models are
// launch- and GEMM-shape-bound, mid ones run near the GPU's matmul rate, large ones add
// pipeline and sharding communication, the largest need every form of parallelism at once.
std::string model_size_band(double params_billion) {
  if (params_billion < 3.0) return "<3B";
  if (params_billion < 30.0) return "3-30B";
  if (params_billion < 200.0) return "30-200B";
  return ">=200B";
}

std::vector<std::string> training_classes(std::string_view gpu_name, double params_billion, bool moe) {
  const std::string base = gpu_family(gpu_name) + (moe ? " MoE" : " dense");
  return {base + " " + model_size_band(params_billion), base};
}

std::vector<std::string> serving_classes(ServingMetric m, std::string_view gpu_name) {
  const char* metric = m == ServingMetric::throughput ? "throughput" : m == ServingMetric::ttft ? "TTFT" : "TPOT";
  return {std::string(metric) + " " + gpu_family(gpu_name)};
}

// The validation report's size bands (nccl-tests' small messages are latency-bound, large ones
// bandwidth-bound).
std::string collective_size_band(double size_bytes) {
  constexpr double kSmall = 64.0 * 1024, kLarge = 64.0 * 1024 * 1024;
  return size_bytes <= kSmall ? "<=64KiB" : size_bytes >= kLarge ? ">=64MiB" : "64KiB-64MiB";
}

std::vector<std::string> collective_classes(double size_bytes, const CollectivePath& path) {
  const std::string size = collective_size_band(size_bytes);
  if (!path.multi_node) return {size + " 1 node " + path.gpu_fabric};
  // TCP is its own class whatever the wire (host stacks and NIC offloads, not RDMA).
  const std::string net = path.network_transport == "tcp" ? "tcp" : path.network_family;
  return {size + " multi-node " + net};
}

}  // namespace gf::band
