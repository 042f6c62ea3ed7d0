#pragma once
// What fraction of a GPU's peak its kernels reach, from published measurements
// (data/compute/efficiency.yaml, docs/compute-efficiency-format.md): GEMM ceilings and the
// fixed cost of a kernel, FlashAttention's efficiency by sequence length and head size.
//
// A GEMM takes t0 + max(FLOPs / (peak x ceiling), bytes / HBM rate): a fixed cost (launch,
// prologue, tail; fitted here to the published size sweep, about 3-6 us on H100) and the work at
// the best rate a shape search found. That one line reproduces OpenXLA's H100 table within 10%
// from 1024^3 up (tests/compute_model_test.cpp).
#include <map>
#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "work/training_memory.hpp"

namespace gf::work {

struct GemmModel {
  double ceiling = 0;        // fraction of the dense peak a well-shaped GEMM reaches
  double ceiling_k = 0;      // the K of the shape the ceiling was measured at (0: not given)
  double fixed_s = 0;        // per-kernel cost, with every FLOP at the ceiling's rate whatever K
  double depth_fixed_s = 0;  // per-kernel cost where the GEMM's depth is charged (gemm_depth_factor)
  std::string source;
};

// Transformer Engine's userbuffers overlap of sequence-parallel collectives with the GEMMs beside
// them (Megatron's --tp-comm-overlap), as the framework's defaults run it.
struct UserbuffersOverlap {
  int pipeline_comm_sms = 0;  // SMs the pipelined reduce-scatter's kernel holds, kept from the GEMM
  int pipeline_splits = 0;    // chunks the reduce-scatter's GEMM is cut in; the last one's scatter shows
  std::string source;
};

// How much longer than at the ceiling's own shape a GEMM of depth `k` takes per FLOP: each
// output tile does (k + K0) k-steps of work for k of math (K0 = tile_overhead_k), relative to the
// ceiling measured at depth `ceiling_k` (0: not given, taken as infinitely deep).
double gemm_depth_factor(double k, double ceiling_k, double tile_overhead_k);

class ComputeEfficiency {
public:
  // The built-in data file.
  static const ComputeEfficiency& builtin();
  // Reads a file of that format (an InputError at file:line when malformed).
  static ComputeEfficiency parse(const std::string& text, const std::string& file);

  // For a GPU of the catalog: its own figure, else its family's, else the nearest family's
  // (said in `source`).
  [[nodiscard]] GemmModel gemm(const hw::GpuSpec& gpu, Precision p) const;
  // FlashAttention's fraction of peak for one pass at this sequence length and head size, at
  // the sustained clock of a training step (the published burst figure x the family's
  // sustained/burst matmul ratio). `kernel` ("flash-attention-3", "flash-attention-2") picks that kernel's curves where
  // the family has them; otherwise the family's curves stand for it.
  [[nodiscard]] double attention(const hw::GpuSpec& gpu, Precision p, long seq, long head_dim, bool causal,
                                 bool backward, const std::string& kernel = "flash-attention-3") const;
  // Whether the GPU's family has published FlashAttention curves or a range.
  [[nodiscard]] bool has_attention_figures(const hw::GpuSpec& gpu) const;
  // Streaming multiprocessors of the GPU where the file gives them for its family; 0 if not.
  [[nodiscard]] int sm_count(const hw::GpuSpec& gpu) const;
  // Fraction of HBM bandwidth a GEMM limited by memory (weights streamed for few rows) reaches:
  // an assumption (no cited measurement of that kernel class in the file).
  [[nodiscard]] double memory_fraction() const { return memory_fraction_; }
  // Fraction of HBM bandwidth the element-wise, norm, loss and optimizer kernels of a training
  // framework reach on this GPU: the median of its family's `framework` rows in `memory_bound`
  // (the median over every family's rows where its own has none).
  [[nodiscard]] double kernel_memory_fraction(const hw::GpuSpec& gpu) const;
  [[nodiscard]] const std::vector<std::string>& assumptions() const { return assumptions_; }
  // The k-independent work of each output tile of a GEMM (filling the operand pipeline, writing
  // the tile), in k-steps of its main loop: the median over the file's `k_sweep` entries of
  // (intercept - launch) / slope of time against K. A GEMM's tiles take (K + this) / K of their
  // main loop.
  [[nodiscard]] double tile_overhead_k() const { return tile_overhead_k_; }
  // The file's `tp_comm_overlap` mechanism entry (pipeline_splits 0 where the file has none).
  [[nodiscard]] const UserbuffersOverlap& userbuffers() const { return userbuffers_; }

private:
  struct Curve {
    std::string gpu;
    std::string precision;
    bool backward = false;
    bool both_passes = false;  // one forward + backward rate, standing for either pass
    bool causal = false;
    long head_dim = 0;
    std::string kernel;
    std::vector<std::pair<double, double>> points;  // (seq, fraction)
  };
  struct Family {
    std::string name;
    std::vector<std::string> gpus;
    std::map<std::string, GemmModel> gemm;  // by precision, the family's best-cited ceiling
    std::map<std::pair<std::string, std::string>, GemmModel> gpu_ceiling;  // (GPU, precision): its own
    std::vector<Curve> attention;
    double attention_range_mid = 0;  // where only a range is published
    // The family's sustained matmul rate over its burst rate on the same GPU (the ceiling and
    // the burst figure of one GPU): the attention benchmarks were timed in short bursts too,
    // at the boost clock, and a step runs every kernel at the clock settled at the power limit.
    double sustained_ratio = 1;
    std::string sustained_gpu;  // the GPU the ratio was measured on
    int sm_count = 0;
    double kernel_memory_fraction = 0;  // median of the family's framework rows; 0: none
  };
  std::vector<Family> families_;
  double memory_fraction_ = 0.8;
  double kernel_memory_fraction_all_ = 0.8;  // over every framework row (families without rows)
  std::vector<std::string> assumptions_;
  UserbuffersOverlap userbuffers_;
  double tile_overhead_k_ = 0;
  [[nodiscard]] const Family* family_of(const hw::GpuSpec& gpu) const;
};

}  // namespace gf::work
