#pragma once
// The classes a validation row and a user's question fall into, for the error bands: one
// function per suite, used both when the bands are computed from the validation rows and when
// a command looks one up, so the two cannot drift apart. Each returns the classes from the
// most specific to the broadest one a band may come from. Broader classes never drop what the
// error depends on most (the GPU family, the size band, the fabric): a question outside every
// validated class is answered "unvalidated".
#include <string>
#include <string_view>
#include <vector>

namespace gf::band {

// "a100-sxm4-80gb" -> "A100-SXM4", "h100-pcie" -> "H100-PCIE": the catalog name without its
// memory size, upper-case.
std::string gpu_family(std::string_view gpu_name);

// Parameters as the model counts them (MoE: every expert).
std::string model_size_band(double params_billion);

// {"H100 dense 3-30B", "H100 dense"}.
std::vector<std::string> training_classes(std::string_view gpu_name, double params_billion, bool moe);

// The serving figure banded: throughput, TTFT or TPOT.
enum class ServingMetric { throughput, ttft, tpot };
std::vector<std::string> serving_classes(ServingMetric m, std::string_view gpu_name);

// Where the collective's data runs: inside one node, through its GPU fabric ("nvswitch",
// "nvlink", "pcie"); across nodes, over the network's family and transport ("infiniband",
// "roce", "efa", "tcp").
struct CollectivePath {
  bool multi_node = false;
  std::string gpu_fabric;
  std::string network_family;
  std::string network_transport;
};
std::string collective_size_band(double size_bytes);
std::vector<std::string> collective_classes(double size_bytes, const CollectivePath& path);

}  // namespace gf::band
