#include "work/compute_efficiency.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::work {

namespace {

constexpr const char* kFile = "data/compute/efficiency.yaml";

std::string text_of(const YAML::Node& n, const char* key) {
  return n[key] && n[key].IsScalar() ? n[key].Scalar() : std::string();
}

double number_of(const YAML::Node& n, const char* key, const std::string& file) {
  if (!n[key] || !n[key].IsScalar()) return std::numeric_limits<double>::quiet_NaN();
  try {
    return n[key].as<double>();
  } catch (const YAML::Exception&) {
    throw InputError(location_of(n[key], file), key, "'" + n[key].Scalar() + "' is not a number", "a number");
  }
}

// The precision names of the catalog's tflops_dense.
std::string precision_key(Precision p) {
  switch (p) {
    case Precision::fp32: return "tf32";  // fp32 training runs its matmuls on TF32 tensor cores
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "bf16";
}

// Interpolates fraction against log(seq), clamped at the ends.
double interpolate(const std::vector<std::pair<double, double>>& pts, double x) {
  if (pts.empty()) return 0;
  if (x <= pts.front().first) return pts.front().second;
  if (x >= pts.back().first) return pts.back().second;
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (x <= pts[i].first) {
      const double a = std::log(pts[i - 1].first), b = std::log(pts[i].first);
      const double w = (std::log(x) - a) / (b - a);
      return pts[i - 1].second + w * (pts[i].second - pts[i - 1].second);
    }
  }
  return pts.back().second;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds of one GEMM of a sweep: 2 m n k FLOPs at the rate the source printed.
double sweep_seconds(const YAML::Node& e, double m, double n, double k, const std::string& file) {
  const double tflops = number_of(e, "tflops", file);
  if (!(tflops > 0) || !(m > 0 && n > 0 && k > 0))
    throw InputError(location_of(e, file), "tflops", "a k_sweep point needs positive m, n, k and tflops",
                     "{k: 1024, tflops: 494.4}");
  return 2 * m * n * k / (tflops * 1e12);
}

// A k_sweep: the time of a GEMM of fixed m x n is a line in K, launch + tiles x (K + K0) x rate;
// K0 = (intercept - launch) / slope, the tiles' k-independent work in k-steps.
double tile_overhead_of(const YAML::Node& e, const std::string& file) {
  const double m = number_of(e, "m", file), n = number_of(e, "n", file);
  if (!e["points"] || !e["points"].IsSequence() || e["points"].size() < 2 || !e["launch"])
    throw InputError(location_of(e, file), "points", "a k_sweep needs a launch entry and two points or more",
                     "launch: {m, n, k, tflops}, points: [{k, tflops}, ...]");
  const YAML::Node& l = e["launch"];
  const double launch =
      sweep_seconds(l, number_of(l, "m", file), number_of(l, "n", file), number_of(l, "k", file), file);
  std::vector<std::pair<double, double>> pts;  // (k, seconds)
  for (const auto& p : e["points"]) {
    const double k = number_of(p, "k", file);
    pts.emplace_back(k, sweep_seconds(p, m, n, k, file));
  }
  double mk = 0, mt = 0;
  for (const auto& [k, t] : pts) mk += k, mt += t;
  mk /= static_cast<double>(pts.size());
  mt /= static_cast<double>(pts.size());
  double sxy = 0, sxx = 0;
  for (const auto& [k, t] : pts) sxy += (k - mk) * (t - mt), sxx += (k - mk) * (k - mk);
  const double slope = sxx > 0 ? sxy / sxx : 0;
  if (!(slope > 0))
    throw InputError(location_of(e, file), "points", "a k_sweep's time must grow with K", "points at distinct K");
  return std::max(0.0, (mt - slope * mk - launch) / slope);
}

}  // namespace

double gemm_depth_factor(double k, double ceiling_k, double tile_overhead_k) {
  if (!(k > 0) || !(tile_overhead_k > 0)) return 1.0;
  const double at_ceiling = ceiling_k > 0 ? (ceiling_k + tile_overhead_k) / ceiling_k : 1.0;
  return (k + tile_overhead_k) / k / at_ceiling;
}

ComputeEfficiency ComputeEfficiency::parse(const std::string& text, const std::string& file) {
  ComputeEfficiency out;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError({file, e.mark.line + 1, e.mark.column + 1}, "", "not valid YAML: " + e.msg, "");
  }
  if (!root["families"] || !root["families"].IsSequence())
    throw InputError(location_of(root, file), "families", "missing or not a list", "a list of GPU families");
  // The tiles' k-independent work, from every family's K sweeps (one global constant: the
  // depth of a tile's prologue and epilogue in k-steps, which the sweeps of H100 and B200 agree on).
  std::vector<double> overheads;
  std::string sweep_ids;
  for (const auto& f : root["families"])
    if (f["gemm"] && f["gemm"].IsSequence())
      for (const auto& e : f["gemm"])
        if (e.IsMap() && text_of(e, "kind") == "k_sweep") {
          overheads.push_back(tile_overhead_of(e, file));
          sweep_ids += fmt::format("{}{} {:.0f}", sweep_ids.empty() ? "" : ", ", text_of(e, "id"), overheads.back());
        }
  if (!overheads.empty()) out.tile_overhead_k_ = median_of(overheads);
  for (const auto& f : root["families"]) {
    Family fam;
    fam.name = text_of(f, "family");
    if (f["gpus"] && f["gpus"].IsSequence())
      for (const auto& g : f["gpus"]) fam.gpus.push_back(g.Scalar());
    if (f["sm_count"] && f["sm_count"].IsMap())
      fam.sm_count = static_cast<int>(number_of(f["sm_count"], "value", file));
    // GEMM: the ceiling of the family's first-listed GPU per precision (a GPU with a ceiling of
    // its own keeps it); the fixed cost from a size sweep of the same precision (median of
    // t - F / (peak x ceiling) over its points). Ceilings are sustained rates (the clock settled
    // at the power limit); a sweep timed in short runs sits at the burst clock, so where the
    // family cites a burst figure its fixed cost is taken against that instead, or the fixed
    // cost would absorb the clock drop.
    std::map<std::string, std::vector<YAML::Node>> curves;
    std::map<std::string, double> burst;
    std::map<std::pair<std::string, std::string>, double> burst_of_gpu;  // (GPU, precision)
    if (f["gemm"] && f["gemm"].IsSequence()) {
      for (const auto& e : f["gemm"]) {
        if (!e.IsMap())
          throw InputError(location_of(e, file), "gemm", "an entry is not a map", "{id, kind, gpu, precision, ...}");
        const std::string kind = text_of(e, "kind");
        const std::string prec = text_of(e, "precision");
        if (kind == "ceiling") {
          const double fraction = number_of(e, "fraction", file);
          if (!(fraction > 0 && fraction <= 1))
            throw InputError(location_of(e, file), "fraction", "a ceiling needs a fraction in (0, 1]", "0 < f <= 1");
          const double shape_k = e["shape"] && e["shape"].IsMap() ? number_of(e["shape"], "k", file) : 0.0;
          const GemmModel model{fraction, std::isnan(shape_k) ? 0.0 : shape_k, 0, 0, text_of(e, "source")};
          if (!fam.gemm.contains(prec)) fam.gemm[prec] = model;
          // A GPU measured on its own (the PCIe A100 under its 300 W limit) keeps its figure.
          if (e["gpu"]) fam.gpu_ceiling.try_emplace({e["gpu"].Scalar(), prec}, model);
        } else if (kind == "burst") {
          const double fraction = number_of(e, "fraction", file);
          if (!(fraction > 0 && fraction <= 1))
            throw InputError(location_of(e, file), "fraction", "a burst figure needs a fraction in (0, 1]",
                             "0 < f <= 1");
          burst.try_emplace(prec, fraction);
          if (e["gpu"]) burst_of_gpu.try_emplace({e["gpu"].Scalar(), prec}, fraction);
        } else if (kind == "curve") {
          curves[prec].push_back(e);
        }
      }
    }
    // The sustained/burst ratio from the first 16-bit ceiling whose GPU also has a burst figure
    // (H200: 708.5 sustained against 841.9 burst in one table). Burst-timed kernels other than
    // GEMMs (the attention benchmarks) lose the same share when the clock settles.
    if (f["gemm"] && f["gemm"].IsSequence()) {
      for (const auto& e : f["gemm"]) {
        if (text_of(e, "kind") != "ceiling" || text_of(e, "precision") != "bf16" || !e["gpu"]) continue;
        const auto b = burst_of_gpu.find({e["gpu"].Scalar(), "bf16"});
        if (b == burst_of_gpu.end()) continue;
        fam.sustained_ratio = std::min(1.0, number_of(e, "fraction", file) / b->second);
        fam.sustained_gpu = e["gpu"].Scalar();
        break;
      }
    }
    for (auto& [prec, model] : fam.gemm) {
      auto it = curves.find(prec);
      if (it == curves.end()) continue;
      std::vector<double> fixed, depth_fixed;
      const auto b = burst.find(prec);
      const double timed_at = b != burst.end() ? std::max(b->second, model.ceiling) : model.ceiling;
      for (const auto& c : it->second) {
        const double peak = number_of(c, "peak_tflops", file) * 1e12;
        if (!(peak > 0) || !c["points"]) continue;
        for (const auto& p : c["points"]) {
          const double flops =
              2 * number_of(p, "b", file) * number_of(p, "m", file) * number_of(p, "n", file) * number_of(p, "k", file);
          const double tflops = number_of(p, "tflops", file) * 1e12;
          if (!(flops > 0) || !(tflops > 0)) continue;
          fixed.push_back(flops / tflops - flops / (peak * timed_at));
          const double depth = gemm_depth_factor(number_of(p, "k", file), model.ceiling_k, out.tile_overhead_k_);
          depth_fixed.push_back(flops / tflops - flops * depth / (peak * timed_at));
        }
      }
      if (!fixed.empty()) {
        // The upper median (an even count takes the higher of the middle two).
        std::sort(fixed.begin(), fixed.end());
        std::sort(depth_fixed.begin(), depth_fixed.end());
        model.fixed_s = std::max(0.0, fixed[fixed.size() / 2]);
        model.depth_fixed_s = std::max(0.0, depth_fixed[depth_fixed.size() / 2]);
      }
    }
    if (f["attention"] && f["attention"].IsSequence()) {
      for (const auto& e : f["attention"]) {
        if (!e.IsMap())
          throw InputError(location_of(e, file), "attention", "an entry is not a map",
                           "{id, kernel, gpu, pass, causal, head_dim, points}");
        if (e["fraction_min"] && e["fraction_max"]) {
          fam.attention_range_mid = (number_of(e, "fraction_min", file) + number_of(e, "fraction_max", file)) / 2;
          continue;
        }
        if (!e["points"]) continue;
        Curve c;
        c.gpu = text_of(e, "gpu");
        c.precision = text_of(e, "precision");
        c.backward = text_of(e, "pass") == "bwd";
        c.both_passes = text_of(e, "pass") == "fwd+bwd";
        c.causal = e["causal"] && e["causal"].IsScalar() && e["causal"].as<bool>(false);
        c.head_dim = static_cast<long>(number_of(e, "head_dim", file));
        for (const auto& p : e["points"])
          c.points.push_back({number_of(p, "seq_len", file), number_of(p, "fraction", file)});
        std::sort(c.points.begin(), c.points.end());
        // FlashAttention-3, -2 and cuDNN curves of 16-bit precision stand for the training kernels.
        c.kernel = text_of(e, "kernel");
        if ((c.kernel == "flash-attention-3" || c.kernel == "flash-attention-2" || c.kernel == "cudnn") &&
            c.precision != "fp8")
          fam.attention.push_back(c);
      }
    }
    out.families_.push_back(std::move(fam));
  }
  if (root["tp_comm_overlap"] && root["tp_comm_overlap"].IsSequence()) {
    for (const auto& e : root["tp_comm_overlap"]) {
      if (!e.IsMap() || text_of(e, "kind") != "mechanism") continue;
      const double sms = number_of(e, "pipeline_comm_sms", file);
      const double splits = number_of(e, "pipeline_splits", file);
      if (!(sms >= 0) || !(splits >= 1))
        throw InputError(location_of(e, file), "pipeline_splits",
                         "a userbuffers mechanism needs pipeline_comm_sms >= 0 and pipeline_splits >= 1",
                         "e.g. pipeline_comm_sms: 16, pipeline_splits: 4");
      out.userbuffers_ = {static_cast<int>(sms), static_cast<int>(splits), text_of(e, "source")};
    }
  }
  // Memory-bound kernels as the frameworks run them: each family's median over its rows.
  std::vector<std::pair<std::string, double>> framework_rows;  // (GPU, fraction)
  if (root["memory_bound"] && root["memory_bound"].IsSequence()) {
    for (const auto& e : root["memory_bound"]) {
      if (!e.IsMap())
        throw InputError(location_of(e, file), "memory_bound", "a row is not a map",
                         "{id, gpu, kernel, implementation, fraction, source}");
      const double fraction = number_of(e, "fraction", file);
      if (!(fraction > 0 && fraction <= 1))
        throw InputError(location_of(e, file), "fraction", "a memory-bound row needs a fraction in (0, 1]",
                         "0 < f <= 1");
      if (text_of(e, "implementation") == "framework") framework_rows.emplace_back(text_of(e, "gpu"), fraction);
    }
  }
  std::vector<double> every;
  for (const auto& [gpu, fraction] : framework_rows) every.push_back(fraction);
  if (!every.empty()) out.kernel_memory_fraction_all_ = median_of(every);
  std::string fractions;
  for (auto& fam : out.families_) {
    std::vector<double> own;
    for (const auto& [gpu, fraction] : framework_rows)
      if (std::find(fam.gpus.begin(), fam.gpus.end(), gpu) != fam.gpus.end()) own.push_back(fraction);
    if (own.empty()) continue;
    fam.kernel_memory_fraction = median_of(own);
    fractions += fmt::format("{}{} {:.0f}% ({} rows)", fractions.empty() ? "" : ", ", fam.name,
                             100 * fam.kernel_memory_fraction, own.size());
  }
  out.assumptions_.push_back(fmt::format(
      "element-wise, norm, loss and optimizer kernels reach the median of published framework-kernel measurements "
      "(ATen, torch.compile, Megatron's fusions; data/compute/efficiency.yaml memory_bound) of HBM bandwidth: {}; "
      "other GPUs {:.0f}%; GEMMs limited by memory 80% (assumed)",
      fractions, 100 * out.kernel_memory_fraction_all_));
  out.assumptions_.push_back("attention on GPUs without published FlashAttention figures: 50% of peak");
  if (out.tile_overhead_k_ > 0)
    out.assumptions_.push_back(fmt::format(
        "each GEMM tile's prologue and epilogue cost {:.0f} k-steps of its main loop (median of the K sweeps {}), so "
        "a GEMM of depth K runs at (K + {:.0f}) / K of its main loop's time, relative to the shape its ceiling was "
        "measured at",
        out.tile_overhead_k_, sweep_ids, out.tile_overhead_k_));
  std::string ratios;
  for (const auto& f : out.families_) {
    if (f.sustained_ratio >= 1 || (f.attention.empty() && f.attention_range_mid <= 0)) continue;
    ratios += fmt::format("{}{} x{:.2f} ({})", ratios.empty() ? "" : ", ", f.name, f.sustained_ratio, f.sustained_gpu);
  }
  if (!ratios.empty())
    out.assumptions_.push_back(
        "attention benchmarks (short bursts at the boost clock) scaled by the sustained/burst matmul ratio of their "
        "family, as the clock settles at the power limit in a step: " +
        ratios);
  return out;
}

const ComputeEfficiency& ComputeEfficiency::builtin() {
  static const ComputeEfficiency e = parse(std::string(data::file(kFile)), kFile);
  return e;
}

bool ComputeEfficiency::has_attention_figures(const hw::GpuSpec& gpu) const {
  const Family* f = family_of(gpu);
  return f != nullptr && (!f->attention.empty() || f->attention_range_mid > 0);
}

double ComputeEfficiency::kernel_memory_fraction(const hw::GpuSpec& gpu) const {
  // Only a family's own GPUs, as for the SM count: a neighbour family's kernels on other HBM
  // would be a guess, so the median over all rows stands in.
  for (const auto& f : families_)
    if (std::find(f.gpus.begin(), f.gpus.end(), gpu.name) != f.gpus.end() && f.kernel_memory_fraction > 0)
      return f.kernel_memory_fraction;
  return kernel_memory_fraction_all_;
}

int ComputeEfficiency::sm_count(const hw::GpuSpec& gpu) const {
  // Only a family's own GPUs: a neighbour family's count would be a guess.
  for (const auto& f : families_)
    if (std::find(f.gpus.begin(), f.gpus.end(), gpu.name) != f.gpus.end()) return f.sm_count;
  return 0;
}

const ComputeEfficiency::Family* ComputeEfficiency::family_of(const hw::GpuSpec& gpu) const {
  for (const auto& f : families_)
    if (std::find(f.gpus.begin(), f.gpus.end(), gpu.name) != f.gpus.end()) return &f;
  // Not listed: the family of the nearest compute capability at or below it.
  const Family* best = nullptr;
  int best_cc = -1;
  const std::map<std::string, int> cc{{"volta", 70}, {"ampere", 80}, {"ada", 89}, {"hopper", 90}, {"blackwell", 100}};
  for (const auto& f : families_) {
    const auto it = cc.find(f.name);
    if (it == cc.end() || f.gemm.empty()) continue;
    if (it->second <= std::max(gpu.compute_capability, 70) && it->second > best_cc) {
      best = &f;
      best_cc = it->second;
    }
  }
  return best != nullptr ? best : (families_.empty() ? nullptr : &families_.front());
}

GemmModel ComputeEfficiency::gemm(const hw::GpuSpec& gpu, Precision p) const {
  const Family* f = family_of(gpu);
  GemmModel out{0.7, 0, 5e-6, 5e-6, "no published figure: 0.7 of peak and 5 us per kernel assumed"};
  if (f == nullptr) return out;
  const std::string key = precision_key(p) == "fp16" ? "bf16" : precision_key(p);  // same tensor rate
  auto it = f->gemm.find(key);
  if (it == f->gemm.end()) it = f->gemm.find("bf16");
  if (it == f->gemm.end()) return out;
  out = it->second;
  if (const auto own = f->gpu_ceiling.find({gpu.name, it->first}); own != f->gpu_ceiling.end()) {
    out.ceiling = own->second.ceiling;
    out.ceiling_k = own->second.ceiling_k;
    out.source = own->second.source;
  }
  if (out.fixed_s <= 0) {
    // No size sweep for this family: the fixed cost of the nearest family that has one.
    for (const auto& other : families_) {
      const auto o = other.gemm.find(it->first);
      if (o != other.gemm.end() && o->second.fixed_s > 0) {
        out.fixed_s = o->second.fixed_s;
        out.depth_fixed_s = o->second.depth_fixed_s;
        out.source += " (fixed cost per kernel from the " + other.name + " size sweep)";
        break;
      }
    }
  }
  return out;
}

double ComputeEfficiency::attention(const hw::GpuSpec& gpu, Precision, long seq, long head_dim, bool causal,
                                    bool backward, const std::string& kernel) const {
  const Family* f = family_of(gpu);
  if (f == nullptr) return 0.5;
  // The pass must match (a forward + backward curve matches either, after a curve of the pass
  // itself); then the kernel asked for, else FlashAttention-3, else -2, else any the family has
  // (Ampere's FlashAttention-2 stands for "the best FlashAttention for the GPU"); then the mask,
  // then the nearest head size.
  auto serves = [&](const Curve& c) { return c.both_passes || c.backward == backward; };
  auto has = [&](const std::string& k) {
    return std::any_of(f->attention.begin(), f->attention.end(),
                       [&](const Curve& c) { return serves(c) && c.kernel == k; });
  };
  std::string chosen;
  for (const std::string& k : {kernel, std::string("flash-attention-3"), std::string("flash-attention-2")})
    if (has(k)) {
      chosen = k;
      break;
    }
  const Curve* best = nullptr;
  long best_gap = std::numeric_limits<long>::max();
  for (const auto& c : f->attention) {
    if (!serves(c) || (!chosen.empty() && c.kernel != chosen)) continue;
    const long gap = std::labs(c.head_dim - head_dim) + (c.causal != causal ? 100000 : 0) + (c.both_passes ? 1000 : 0);
    if (gap < best_gap) {
      best = &c;
      best_gap = gap;
    }
  }
  if (best != nullptr) return interpolate(best->points, static_cast<double>(seq)) * f->sustained_ratio;
  if (f->attention_range_mid > 0) return f->attention_range_mid * f->sustained_ratio;  // a published range's middle
  return 0.5;  // no figure for this family: half of peak (said in assumptions())
}

}  // namespace gf::work
