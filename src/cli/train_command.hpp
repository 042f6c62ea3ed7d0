#pragma once
// `gpufabric train`: one training step of a model on a cluster under a parallel layout: step
// time, throughput, TFLOP/s per GPU in both conventions, MFU and HFU, where the time goes, memory
// per GPU, and the scaling curve over node counts.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/cluster_options.hpp"

namespace gf::cli {

struct TrainOptions {
  ClusterOptions cluster;
  bool list = false;
  std::string model, model_file;
  std::string layers, hidden, heads, kv_heads, ffn, seq, vocab, experts, top_k;
  bool gated_ffn = false;
  std::string tp = "1", pp = "1", dp, cp = "1", ep = "1", vpp = "1", order = "tp-cp-ep-dp-pp";
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  bool overlap_p2p_comm = false;
  // Pipeline split and MoE (pipeline_split.hpp, moe_overlap.hpp, parallel_layout.hpp).
  std::string etp, first_stage_layers, last_stage_layers, pipeline_layout, moe_overlap = "none";
  bool account_embedding = false, account_loss = false;
  std::string micro_batch = "1", global_batch, recompute = "none", precision = "bf16", attention = "flash",
              kernels = "fused";
  std::string zero = "0", fsdp;
  bool distributed_optimizer = false;
  bool overlap_param_gather = false;
  bool grad_reduce_bf16 = false;
  bool cross_entropy_fusion = false;
  std::string bucket_mb = "25";
  std::string head_tokens = "1";
  std::string gpus;  // empty: every GPU
  std::string scale, scaling = "weak";
  std::string format = "table";
  std::string trace;
  std::string background;
  std::string compute_profile;
  std::string input, input_source = "nvme", input_decode = "cpu", input_memory = "pinned", input_prefetch = "2",
                     input_loader_cores, input_network_fs;

  // Set by add_to: tells an option given at its default value from one left out, for the checks
  // that refuse options a combination makes inert.
  const CLI::App* app = nullptr;

  void add_to(CLI::App& app);
  [[nodiscard]] std::string run() const;
  [[nodiscard]] bool given(const char* flag) const { return app != nullptr && app->count(flag) > 0; }
};

}  // namespace gf::cli
