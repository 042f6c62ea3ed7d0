#include "validate/training_validation.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <string_view>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"
#include "topo/cluster_loader.hpp"
#include "validate/machine.hpp"
#include "work/model_library.hpp"
#include "work/model_size.hpp"
#include "work/train_step.hpp"

namespace gf::validate {

namespace {

constexpr std::string_view kFilePrefix = "data/validation/training";

// The preset that stands for a row's GPU (its servers: 8 GPUs on NVSwitch, InfiniBand). The
// row's own GPU then takes every GPU slot (--gpu), so a DGX A100 of 40 GB parts runs at their
// memory bandwidth, not the 80 GB part's.
const std::map<std::string, std::string>& presets() {
  static const std::map<std::string, std::string> p{{"a100-sxm4-80gb", "dgx-a100"}, {"a100-sxm4-40gb", "dgx-a100"},
                                                    {"h100-sxm5", "dgx-h100"},      {"h100-sxm5-96gb-500w", "dgx-h100"},
                                                    {"h200-sxm", "hgx-h200"},       {"b200", "dgx-b200"},
                                                    {"v100-sxm2-32gb", "dgx1-v100"}};
  return p;
}

long integer(const YAML::Node& r, const char* key, long fallback) {
  return r[key] && r[key].IsScalar() ? r[key].as<long>(fallback) : fallback;
}

}  // namespace

std::vector<TrainingCheck> check_training(const hw::Catalog& catalog) {
  // Every built-in file of this suite (data/validation/training*.yaml), in the embedded order (sorted by path),
  // so that a new source can bring its rows in a file of its own.
  std::vector<TrainingCheck> out;
  for (const auto& f : data::files_under(kFilePrefix, ".yaml")) {
    auto more = check_training(std::string(f.text), std::string(f.path), catalog);
    out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return out;
}

std::vector<TrainingCheck> check_training(const std::string& text, const std::string& file,
                                          const hw::Catalog& catalog) {
  const YAML::Node root = parse_yaml(text, file);
  const YAML::Node rows = root.IsMap() ? root["rows"] : root;
  if (!rows || !rows.IsSequence()) throw InputError({file, 1, 0}, "rows", "no list of rows", "rows: [ ... ]");
  std::vector<TrainingCheck> out;
  for (const auto& r : rows) {
    TrainingCheck c;
    c.id = r["id"].Scalar();
    c.source_id = r["source_id"] ? r["source_id"].Scalar() : "";
    c.model = r["model"] ? r["model"].Scalar() : "";
    c.gpus = integer(r, "gpus", 0);
    c.gpu = r["gpu"] ? r["gpu"].Scalar() : "";
    c.calibration = r["calibration"] && r["calibration"].as<bool>(false);
    // The row's choices, checked before any reason to skip it, so a typo is refused in every row.
    // (fsdp lists its names in the order the rows' error messages have always given them.)
    const std::string fsdp = row_choice(r, file, "fsdp", "", {"full", "hybrid", "grad-op"});
    const std::string prec = row_choice(r, file, "precision", "bf16", spellings(work::kPrecisionNames));
    const std::string rc = row_choice(r, file, "recompute", "none", names(work::kRecomputeNames));
    const std::string kernels = row_choice(r, file, "kernels", "fused", names(work::kKernelsNames));
    const std::string conv = row_choice(r, file, "flops_convention", "model", {"model", "hardware"});
    auto skip = [&](const std::string& why) {
      c.skipped = why;
      out.push_back(c);
    };
    // A measurement whose unit the model cannot reproduce (samples of a length the source does
    // not publish, say): reported with its reason, not scored.
    if (r["not_comparable"]) {
      skip("not comparable: " + r["not_comparable"].Scalar());
      continue;
    }
    const long pp = integer(r, "pp", 1), cp = integer(r, "cp", 1), ep = integer(r, "ep", 1);
    const std::string gpu = r["gpu"].Scalar();
    const auto preset = presets().find(gpu);
    // A machine no preset stands for comes as a cluster file of the validation set.
    const std::string cluster = r["cluster"] ? r["cluster"].Scalar() : "";
    if (preset == presets().end() && cluster.empty()) {
      skip("no preset for " + gpu);
      continue;
    }
    const long per_node = integer(r, "gpus_per_node", 8);
    if (per_node != 8 || c.gpus % 8 != 0) {
      skip("not whole 8-GPU servers");
      continue;
    }
    work::ModelSpec m;
    try {
      m = work::library_model(c.model);
    } catch (const InputError&) {
      const YAML::Node a = r["arch"];
      if (!a || !a["layers"] || !a["hidden"] || !a["heads"] || !a["vocab"]) {
        skip("model not in the library and its architecture not given");
        continue;
      }
      m.name = c.model;
      m.layers = a["layers"].as<long>();
      m.hidden = a["hidden"].as<long>();
      m.heads = a["heads"].as<long>();
      m.kv_heads = m.heads;
      m.head_dim = m.hidden / m.heads;
      m.ffn = a["ffn"] ? a["ffn"].as<long>() : 4 * m.hidden;
      m.gated_ffn = a["gated_ffn"] && a["gated_ffn"].as<bool>();
      m.vocab = a["vocab"].as<long>();
      m.seq = 2048;
    }
    if (r["arch"] && r["arch"]["seq"]) m.seq = r["arch"]["seq"].as<long>();
    c.params_b = work::count_parameters(m).total / 1e9;
    c.moe = m.moe.has_value();
    work::TrainOptions o;
    o.layout.tp = integer(r, "tp", 1);
    o.layout.pp = pp;
    o.layout.vpp = integer(r, "vpp", 1);
    o.layout.cp = cp;
    o.layout.ep = ep;
    o.layout.dp = integer(r, "dp", c.gpus / std::max<long>(1, o.layout.tp * pp * cp));
    o.layout.sequence_parallel = r["sequence_parallel"] && r["sequence_parallel"].as<bool>(false);
    o.layout.tp_comm_overlap = o.layout.tp > 1 && r["tp_comm_overlap"] && r["tp_comm_overlap"].as<bool>(false);
    o.layout.overlap_p2p_comm =
        o.layout.vpp > 1 && pp > 1 && r["overlap_p2p_comm"] && r["overlap_p2p_comm"].as<bool>(false);
    // The pipeline split and the MoE grid and overlap, where the row's recipe set them
    // (pipeline_split.hpp, parallel_layout.hpp, moe_overlap.hpp).
    o.layout.etp = integer(r, "etp", 0);
    o.layout.split.first_stage_layers = integer(r, "first_stage_layers", 0);
    o.layout.split.last_stage_layers = integer(r, "last_stage_layers", 0);
    o.layout.split.account_for_embedding =
        r["account_for_embedding_in_pipeline_split"] && r["account_for_embedding_in_pipeline_split"].as<bool>(false);
    o.layout.split.account_for_loss =
        r["account_for_loss_in_pipeline_split"] && r["account_for_loss_in_pipeline_split"].as<bool>(false);
    o.layout.split.layout = r["pipeline_layout"] ? r["pipeline_layout"].Scalar() : "";
    o.layout.split.balanced = row_choice(r, file, "pipeline_split", "megatron", {"megatron", "balanced"}) == "balanced";
    o.moe_overlap =
        *parse_name(work::kMoeOverlapNames, row_choice(r, file, "moe_overlap", "none", names(work::kMoeOverlapNames)));
    // The gradient bucket: PyTorch DDP's 25 MiB unless the row ran Megatron-Core's DDP, whose
    // default bucket is max(40M, 1M x DP) parameters (DP counting context parallelism;
    // DistributedDataParallelConfig.bucket_size: "larger DP sizes need larger buckets to ensure
    // collectives do not become latency-bound"), of fp32 main gradients.
    if (r["ddp_bucket"]) {
      if (r["ddp_bucket"].Scalar() != "megatron")
        throw InputError(location_of(r["ddp_bucket"], file), "ddp_bucket",
                         "unknown bucket '" + r["ddp_bucket"].Scalar() + "'", "megatron (Megatron-Core DDP's default)");
      o.memory.bucket_bytes = 4.0 * std::max(40e6, 1e6 * static_cast<double>(o.layout.dp * cp));
    }
    // Megatron's TP overlap runs with sequence parallelism only.
    if (o.layout.tp_comm_overlap) o.layout.sequence_parallel = true;
    o.memory.micro_batch = integer(r, "micro_batch", 1);
    o.global_batch = integer(r, "global_batch", 0);
    // torchtitan states the batch per data-parallel rank ("local batch"); with a pipeline it is
    // cut into micro-batches of the row's micro_batch (1 where not given; torchtitan's default
    // count of micro-batches has changed between releases, so the rows state it).
    if (o.global_batch == 0 && r["local_batch"]) o.global_batch = integer(r, "local_batch", 1) * o.layout.dp;
    o.memory.precision = *parse_name(work::kPrecisionNames, prec);
    o.memory.recompute = *parse_name(work::kRecomputeNames, rc);
    // Sharding as the row gives it: FSDP's strategy, or a ZeRO stage.
    const long zero = integer(r, "zero", 0);
    o.memory.sharding = !fsdp.empty() ? *parse_name(work::kFsdpNames, fsdp)
                        : zero == 1   ? work::Sharding::zero1
                        : zero == 2   ? work::Sharding::zero2
                        : zero == 3   ? work::Sharding::zero3
                                      : work::Sharding::none;
    o.memory.distributed_optimizer = r["distributed_optimizer"] && r["distributed_optimizer"].as<bool>(false);
    o.memory.overlap_param_gather =
        o.memory.distributed_optimizer && r["overlap_param_gather"] && r["overlap_param_gather"].as<bool>(false);
    // The gradients' type on the wire and the bucket, where the row's framework set them.
    if (r["grad_reduce_dtype"]) {
      const std::string dt = r["grad_reduce_dtype"].Scalar();
      if (dt != "bf16" && dt != "fp32")
        throw InputError(location_of(r["grad_reduce_dtype"], file), "grad_reduce_dtype", "unknown type '" + dt + "'",
                         "bf16, fp32");
      o.memory.grad_reduce_bf16 = dt == "bf16";
    }
    if (r["bucket_mb"]) o.memory.bucket_bytes = r["bucket_mb"].as<double>() * 1024 * 1024;
    o.memory.cross_entropy_fusion = r["cross_entropy_fusion"] && r["cross_entropy_fusion"].as<bool>(false);
    if (r["head_tokens"]) {
      const double f = r["head_tokens"].as<double>(0);
      if (!(f > 0 && f <= 1))
        throw InputError(location_of(r["head_tokens"], file), "head_tokens", "got '" + r["head_tokens"].Scalar() + "'",
                         "a share in (0, 1]");
      o.memory.head_token_fraction = f;
    }
    // The attention kernels the run used: FlashAttention unless the row says otherwise (cuDNN's
    // under Transformer Engine on Hopper, FlashAttention-2, or the scores through HBM before
    // FlashAttention, 2022).
    const std::string attention = r["attention"] ? r["attention"].Scalar() : "flash";
    const auto kernel = parse_name(work::kAttentionNames, attention);
    if (!kernel)
      throw InputError(location_of(r["attention"], file), "attention", "unknown kernel '" + attention + "'",
                       join(names(work::kAttentionNames)));
    o.memory.attention = *kernel;
    // Element-wise kernels: fused unless the row ran PyTorch eager (no torch.compile).
    o.memory.kernels = *parse_name(work::kKernelsNames, kernels);
    try {
      auto spec = cluster.empty() ? topo::load_preset(preset->second, catalog)
                                  : row_machine(RowOrigin::of(r, file, "rows"), "", cluster, catalog);
      topo::ClusterOverrides ov;
      ov.nodes = c.gpus / 8;
      if (cluster.empty()) ov.gpu = gpu;
      topo::apply_overrides(spec, ov, catalog);
      const topo::Topology t(spec, catalog);
      if (o.global_batch > 0 && o.global_batch % (o.memory.micro_batch * o.layout.dp) != 0)
        o.global_batch =
            (o.global_batch / (o.memory.micro_batch * o.layout.dp) + 1) * o.memory.micro_batch * o.layout.dp;
      const auto res = work::train_step(t, m, o);
      const double per_gpu_tokens = res.tokens_per_s / static_cast<double>(c.gpus);
      if (r["measured_tokens_per_s_per_gpu"] && m.is_transformer()) {
        c.metric = "tokens/s/GPU";
        c.measured = r["measured_tokens_per_s_per_gpu"].as<double>();
        c.predicted = per_gpu_tokens;
      } else if (r["measured_tflops_per_gpu"]) {
        c.metric = conv == "hardware" ? "TFLOP/s/GPU (hardware)" : "TFLOP/s/GPU (model)";
        c.measured = r["measured_tflops_per_gpu"].as<double>();
        c.predicted = conv == "hardware" ? res.hardware_tflops_per_gpu : res.model_tflops_per_gpu;
      } else if (r["measured_mfu"]) {
        c.metric = "MFU";
        c.measured = r["measured_mfu"].as<double>();
        c.predicted = res.mfu;
      } else if (r["measured_samples_per_s"]) {
        c.metric = "samples/s";
        c.measured = r["measured_samples_per_s"].as<double>();
        c.predicted = res.samples_per_s;
      } else {
        skip("no throughput figure (scaling efficiency only)");
        continue;
      }
    } catch (const InputError& e) {
      skip(std::string("the model refuses the layout: ") + e.what());
      continue;
    }
    c.error = (c.predicted - c.measured) / c.measured;
    out.push_back(c);
  }
  return out;
}

}  // namespace gf::validate
