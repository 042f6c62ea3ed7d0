// Parsing of input-workload YAML (docs/workload-format.md). Every key is checked, as in the
// catalog: a misspelt key that is silently ignored would be a wrong answer later. Each figure
// may carry its citation beside it as X_source.
#include "work/input_workload.hpp"

#include <filesystem>

#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::work {

namespace {

constexpr std::string_view kDir = "data/workloads/";

// Zero, or a positive figure within its physically sensible range (checked in SI units: a
// positive 1e-300 passes a sign check and then overflows a rate to infinity).
double non_negative(const Fields& f, const char* key, PhysicalRange range) {
  const double v = f.number(key);
  if (v < 0) f.fail(key, "must not be negative", "0 or more");
  if (v > 0) f.check_physical(key, v, 1, range);
  return v;
}

}  // namespace

InputWorkload parse_workload(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Fields f(root, file, "",
                 {"name",
                  "description",
                  "note",
                  "sources",
                  "estimates",
                  "sample_bytes_on_disk",
                  "decoded_bytes",
                  "cpu_seconds_per_sample",
                  "cpu_memory_bytes_per_sample",
                  "gpu_decode",
                  "flops_per_sample",
                  "precision",
                  "peak_fraction",
                  "batch_per_gpu",
                  "loader_workers_per_gpu",
                  "h2d_bytes_per_sample",
                  "h2d_bytes_per_sample_gpu_decode",
                  "d2h_bytes_per_batch",
                  "reference_throughput",
                  "reference_loader_throughput"});
  InputWorkload w;
  w.file = file;
  w.name = f.text("name");
  w.description = f.text_or("description", "");
  w.sample_on_disk = bytes(f.physical("sample_bytes_on_disk", 1, physical::size));
  w.decoded = bytes(f.physical("decoded_bytes", 1, physical::size));
  w.cpu_seconds_per_sample = non_negative(f, "cpu_seconds_per_sample", physical::time_per_item);
  w.cpu_memory_per_sample = bytes(non_negative(f, "cpu_memory_bytes_per_sample", physical::size));
  w.h2d_per_sample =
      f.has("h2d_bytes_per_sample") ? bytes(f.physical("h2d_bytes_per_sample", 1, physical::size)) : w.decoded;
  w.h2d_per_sample_gpu_decode = f.has("h2d_bytes_per_sample_gpu_decode")
                                    ? bytes(f.physical("h2d_bytes_per_sample_gpu_decode", 1, physical::size))
                                    : w.sample_on_disk;

  if (f.has("gpu_decode") && !f.node("gpu_decode").IsNull()) {
    const Fields g(f.node("gpu_decode"), file, "gpu_decode",
                   {"seconds_per_sample", "cpu_seconds_per_sample", "hardware_engine", "note"});
    GpuDecode d;
    d.seconds_per_sample = g.physical("seconds_per_sample", 1, physical::time_per_item);
    d.cpu_seconds_per_sample = non_negative(g, "cpu_seconds_per_sample", physical::time_per_item);
    d.hardware_engine = g.flag_or("hardware_engine", false);
    w.gpu_decode = d;
  }

  w.flops_per_sample = f.physical("flops_per_sample", 1, physical::flops);
  w.precision = f.choice("precision", {"fp64", "tf32", "fp16", "bf16", "fp8", "int8", "fp4", "fp32_vector"});
  w.peak_fraction = f.fraction("peak_fraction");
  w.batch_per_gpu = static_cast<int>(f.integer("batch_per_gpu", 1, 1 << 24));
  w.loader_workers_per_gpu = static_cast<int>(f.integer_or("loader_workers_per_gpu", 0, 4096, 0));
  w.d2h_per_batch = bytes(non_negative(f, "d2h_bytes_per_batch", physical::size));

  // Reference throughputs document published end-to-end figures; check their shape here so a
  // typo in one is caught with the rest.
  if (f.has("reference_throughput")) {
    for (const auto& item : as_list(f.node("reference_throughput"), file, "reference_throughput")) {
      const Fields r(
          item, file, "reference_throughput[]",
          {"hardware", "gpus", "samples_per_second", "tokens_per_second_per_gpu", "mfu_percent", "source", "note"});
      if (r.text("source").empty()) r.fail("source", "a citation must not be empty");
    }
  }
  return w;
}

std::vector<std::string> builtin_workloads() {
  std::vector<std::string> out;
  for (const auto& f : data::files_under(kDir, ".yaml")) {
    std::string name(f.path.substr(kDir.size()));
    out.push_back(name.substr(0, name.size() - 5));
  }
  return out;
}

InputWorkload load_workload(const std::string& name_or_path, const std::string& field) {
  const std::string wanted = std::string(kDir) + name_or_path + ".yaml";
  if (const auto text = data::find(wanted)) return parse_workload(std::string(*text), "builtin:" + wanted);
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml");
  std::error_code ec;  // a name too long for the file system is simply not a file here
  if (looks_like_path || std::filesystem::exists(name_or_path, ec)) {
    return parse_workload(read_text_file(name_or_path, field), name_or_path);
  }
  const auto names = builtin_workloads();
  const std::string hint = suggest(name_or_path, names);
  throw InputError(
      {}, field,
      "unknown input workload '" + name_or_path + "'" + (hint.empty() ? "" : "; did you mean '" + hint + "'?"),
      join(names) + ", or a path to a workload YAML file");
}

}  // namespace gf::work
