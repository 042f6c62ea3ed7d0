#include "cli/train_command.hpp"
#include "cli/number_options.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "band/error_band.hpp"
#include "cli/collective_command.hpp"
#include "cli/output_files.hpp"
#include "cli/pipeline_command.hpp"
#include "comm/collective.hpp"
#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "probe/profile_json.hpp"
#include "report/chrome_trace.hpp"
#include "report/generalisation_report.hpp"
#include "report/memory_breakdown.hpp"
#include "report/table.hpp"
#include "topo/topology.hpp"
#include "validate/error_classes.hpp"
#include "work/input_workload.hpp"
#include "work/model_library.hpp"
#include "work/model_size.hpp"
#include "work/train_step.hpp"

namespace gf::cli {

namespace {
constexpr long kMaxGlobalBatch = 1L << 20;  // sequences (samples) per step: `train --global-batch`
}  // namespace

void TrainOptions::add_to(CLI::App& app) {
  this->app = &app;
  cluster.add_to(app);
  app.add_flag("--list", list, "List the built-in models");
  app.add_option("--model", model, "A built-in model (see --list)");
  app.add_option("--model-file", model_file, "A model YAML file (docs/model-format.md)");
  app.add_option("--layers", layers, "Transformer layers (a model given by its architecture)");
  app.add_option("--hidden", hidden, "Hidden size");
  app.add_option("--heads", heads, "Attention heads");
  app.add_option("--kv-heads", kv_heads, "Key/value heads (GQA; default: --heads)");
  app.add_option("--ffn", ffn, "FFN width (default: 4 x hidden)");
  app.add_flag("--gated-ffn", gated_ffn, "Gated FFN (SwiGLU)");
  app.add_option("--seq", seq,
                 "Sequence length (with --model or --model-file: trains at this length instead of the model's)");
  app.add_option("--vocab", vocab, "Vocabulary size");
  app.add_option("--experts", experts, "MoE experts (with --top-k)");
  app.add_option("--top-k", top_k, "Experts per token");
  app.add_option("--gpus", gpus, "GPUs the job uses, 1 or more: the first ones, node by node (default: all)");
  app.add_option("--tp", tp, "Tensor-parallel size");
  app.add_option("--pp", pp, "Pipeline stages (1F1B; interleaved with --vpp)");
  app.add_option("--dp", dp, "Data-parallel size, 1 or more (default: the GPUs left by TP x PP x CP)");
  app.add_option("--cp", cp, "Context-parallel size (ring attention over the sequence)");
  app.add_option("--ep", ep,
                 "Expert-parallel size (on the experts' own grid with --etp: EP x ETP x PP divides the GPUs; "
                 "all-to-all dispatch and combine)");
  app.add_option("--vpp", vpp,
                 "Virtual pipeline stages per pipeline stage (the interleaved schedule; needs --pp 2 or more)");
  app.add_option("--etp", etp,
                 "Expert tensor-parallel size (Megatron's --expert-tensor-parallel-size; default: --tp). EP x ETP may "
                 "span TP x CP x DP (MoE parallel folding)");
  app.add_option("--first-stage-layers", first_stage_layers,
                 "Transformer layers on the first pipeline stage (Megatron's --decoder-first-pipeline-num-layers)");
  app.add_option("--last-stage-layers", last_stage_layers,
                 "Transformer layers on the last pipeline stage (--decoder-last-pipeline-num-layers)");
  app.add_flag("--account-for-embedding-in-pipeline-split", account_embedding,
               "The embedding counts as a layer when splitting the layers over the stages (Megatron's flag)");
  app.add_flag("--account-for-loss-in-pipeline-split", account_loss,
               "The loss counts as a layer when splitting the layers over the stages (Megatron's flag)");
  app.add_option("--pipeline-layout", pipeline_layout,
                 "Every virtual stage's layers (Megatron's --pipeline-model-parallel-layout), e.g. Et|(tt|)*30mL");
  app.add_option("--moe-overlap", moe_overlap,
                 "none (Megatron-Core's default) | shared-expert (--moe-shared-expert-overlap) | ep-a2a "
                 "(--overlap-moe-expert-parallel-comm) | dualpipe (DeepSeek's DualPipe)");
  app.add_option("--order", order, "Rank order, innermost first (Megatron's: tp-cp-ep-dp-pp)");
  app.add_flag("--sequence-parallel", sequence_parallel, "Megatron's sequence parallelism with TP");
  app.add_flag("--overlap-p2p-comm", overlap_p2p_comm,
               "Megatron's --overlap-p2p-communication: the interleaved schedule posts its sends and receives ahead "
               "(NeMo and Megatron-Bridge turn it on with --vpp)");
  app.add_flag("--tp-comm-overlap", tp_comm_overlap,
               "Megatron's TP communication overlap: all-gathers and reduce-scatters run under the GEMMs (needs "
               "--sequence-parallel)");
  app.add_option("--micro-batch", micro_batch, "Sequences (samples) per micro-batch");
  app.add_option("--global-batch", global_batch,
                 "Sequences per step of the headline run, 1 or more (default: the model's published batch, rounded to "
                 "whole micro-batches per DP rank, else micro-batch x DP; gradient accumulation follows)");
  app.add_option("--recompute", recompute,
                 "none | selective (Megatron's: the attention core) | selective-op (torchtitan's per-op policy: "
                 "element-wise kernels and every other matmul) | full");
  app.add_option("--attention", attention,
                 "flash (the best published FlashAttention for the GPU: FA3 on Hopper; the default) | flash2 "
                 "(FlashAttention-2: PyTorch SDPA, flash-attn 2) | cudnn (cuDNN's fused attention: what Transformer "
                 "Engine runs on Hopper, i.e. Megatron-Core, NeMo, Megatron-Bridge) | unfused (scores in HBM: "
                 "Megatron-LM before 2023, BERT in PyTorch)");
  app.add_option("--kernels", kernels,
                 "fused (element-wise kernels fused: Megatron with Transformer Engine or Apex, torch.compile; the "
                 "default) | eager (one kernel per PyTorch operator with fp32 upcasts: torchtitan or Hugging Face "
                 "without torch.compile)");
  app.add_option("--precision", precision, "fp32 | fp16 | bf16 | fp8");
  app.add_option("--zero", zero, "DeepSpeed ZeRO stage: 0 | 1 | 2 | 3; not with --fsdp");
  app.add_option("--fsdp", fsdp, "PyTorch FSDP: full | grad-op | hybrid (sharded inside a node); not with --zero");
  app.add_flag("--distributed-optimizer", distributed_optimizer, "Megatron's distributed optimizer");
  app.add_flag("--grad-reduce-in-bf16", grad_reduce_bf16,
               "Megatron's --grad-reduce-in-bf16: data-parallel gradient reductions in bf16 instead of fp32 (not "
               "with --fsdp full|hybrid or --zero 3)");
  app.add_flag("--cross-entropy-fusion", cross_entropy_fusion,
               "The loss over the vocabulary in one fused kernel (Transformer Engine's, Megatron's "
               "--cross-entropy-loss-fusion) instead of PyTorch's kernel-by-kernel fp32 softmax");
  app.add_flag("--overlap-param-gather", overlap_param_gather,
               "Megatron's --overlap-param-gather: the distributed optimizer's parameter all-gathers run under the "
               "next step's forward (needs --distributed-optimizer)");
  app.add_option("--bucket-mb", bucket_mb, "DDP gradient bucket, MiB");
  app.add_option("--head-tokens", head_tokens,
                 "Share of the tokens the output head and the loss run on, in (0, 1]: 1 for a language model; "
                 "0.15 for BERT pre-training that gathers the masked positions first (NVIDIA's BERT)");
  app.add_option(
      "--scale", scale,
      "Node counts for a scaling curve, e.g. 1,2,4,16; the headline is the --nodes (or preset) run, else the "
      "largest");
  app.add_option("--scaling", scaling, "With --scale: weak (global batch per GPU kept) | strong (global batch kept)");
  app.add_option("--format", format, "table | json");
  app.add_option("--background", background,
                 "Another job on the GPUs --gpus leaves free, running OP:SIZE back to back (e.g. all_reduce:1G): "
                 "its traffic shares the NICs and the fabric with this job's gradient reductions");
  app.add_option("--input", input,
                 "Input workload feeding each node (see `gpufabric pipeline --list`, or a workload YAML file): its "
                 "pipeline's shortfall is the step's data stall");
  app.add_option("--source", input_source, "With --input: where samples are read from: nvme | page-cache | network-fs");
  app.add_option("--network-fs", input_network_fs, "With --input --source network-fs: the catalog file system");
  app.add_option("--decode", input_decode, "With --input: where samples are decoded: cpu | gpu");
  app.add_option("--memory", input_memory, "With --input: host buffers for H2D copies: pinned | pageable");
  app.add_option("--prefetch", input_prefetch, "With --input: batches prefetched per GPU; 0 loads between steps");
  app.add_option("--loader-cores", input_loader_cores, "With --input: cores for loading and decoding per node");
  app.add_option("--compute-profile", compute_profile,
                 "A profile from `gpufabric probe --save` on this cluster's GPU: its measured GEMM rate replaces "
                 "the published ceiling");
  app.add_option("--trace", trace,
                 "Write one step of the representative GPU as a Chrome/Perfetto trace (JSON) to this file");
}

namespace {

work::ModelSpec model_of(const TrainOptions& o) {
  const int given = (!o.model.empty()) + (!o.model_file.empty()) + (!o.layers.empty());
  if (given != 1)
    throw InputError({}, "--model", given == 0 ? "no model given" : "give one of --model, --model-file, --layers",
                     "--model NAME (--list), --model-file FILE, or --layers --hidden --heads --seq --vocab");
  if (o.layers.empty()) {
    // --seq is the one architecture flag a library model or file takes: the sequence a run trains
    // at is the user's choice (up to the model's context); the rest define the model.
    const std::pair<const char*, const std::string*> arch[] = {
        {"--hidden", &o.hidden}, {"--heads", &o.heads},     {"--kv-heads", &o.kv_heads}, {"--ffn", &o.ffn},
        {"--vocab", &o.vocab},   {"--experts", &o.experts}, {"--top-k", &o.top_k}};
    for (const auto& [flag, value] : arch)
      if (!value->empty())
        throw InputError({}, flag, "an architecture flag beside --model or --model-file",
                         "a library model or file as it is, or the whole architecture from --layers on");
  }
  if (!o.model.empty() || !o.model_file.empty()) {
    work::ModelSpec m = o.model.empty() ? work::model_from_file(o.model_file) : work::library_model(o.model);
    if (!o.seq.empty()) {
      if (!m.is_transformer())
        throw InputError({}, "--seq", m.name + " is not a transformer: it has no sequence length",
                         "--seq with a transformer model");
      // A learned position table is a hard limit; a rotary model's is its stated context (one that
      // only repeats the training sequence is no limit: long-context training extends exactly those).
      const long limit = m.learned_positions ? m.position_rows : m.max_context != m.seq ? m.max_context : 0;
      m.seq = parse_whole("--seq", o.seq, 1, 1L << 24);
      if (limit > 0 && m.seq > limit)
        throw InputError(
            {}, "--seq", fmt::format("{} tokens, beyond {}'s context", m.seq, m.name),
            fmt::format("1 to {} (the model's {})", limit, m.learned_positions ? "position table" : "max_context"));
    }
    return m;
  }
  work::ModelSpec m;
  m.name = "custom";
  m.layers = parse_whole("--layers", o.layers, 1, 100000);
  if (o.hidden.empty() || o.heads.empty() || o.seq.empty() || o.vocab.empty())
    throw InputError({}, "--layers", "a model by its architecture needs --hidden, --heads, --seq and --vocab too",
                     "--layers N --hidden H --heads A --seq S --vocab V");
  m.hidden = parse_whole("--hidden", o.hidden, 1, 1L << 24);
  m.heads = parse_whole("--heads", o.heads, 1, m.hidden);
  if (m.hidden % m.heads != 0) throw InputError({}, "--heads", "does not divide --hidden", "a divisor of --hidden");
  m.kv_heads = o.kv_heads.empty() ? m.heads : parse_whole("--kv-heads", o.kv_heads, 1, m.heads);
  if (m.heads % m.kv_heads != 0) throw InputError({}, "--kv-heads", "does not divide --heads", "a divisor of --heads");
  m.head_dim = m.hidden / m.heads;
  m.ffn = o.ffn.empty() ? 4 * m.hidden : parse_whole("--ffn", o.ffn, 1, 1L << 26);
  m.gated_ffn = o.gated_ffn;
  m.seq = parse_whole("--seq", o.seq, 1, 1L << 24);
  m.vocab = parse_whole("--vocab", o.vocab, 1, 1L << 24);
  if (!o.experts.empty()) {
    work::MoeSpec e;
    e.experts = static_cast<int>(parse_whole("--experts", o.experts, 1, 1 << 16));
    e.top_k = static_cast<int>(parse_whole("--top-k", o.top_k.empty() ? "1" : o.top_k, 1, e.experts));
    e.expert_ffn = m.ffn;
    m.moe = e;
  } else if (!o.top_k.empty()) {
    throw InputError({}, "--top-k", "routes tokens among experts, and --experts is not given",
                     "--experts N --top-k K, or leave --top-k out for a dense model");
  }
  return m;
}

// Options that another makes inert or contradicts: each would be silently ignored, so the run
// would not be the one asked for.
void check_combinations(const TrainOptions& o, const work::ParallelLayout& l) {
  if (l.vpp > 1 && l.pp == 1)
    throw InputError({}, "--vpp", "virtual stages interleave pipeline stages, and --pp is 1",
                     "--pp 2 or more with --vpp, or leave --vpp out");
  if (o.sequence_parallel && l.tp == 1)
    throw InputError({}, "--sequence-parallel", "splits activations over the tensor-parallel group, and --tp is 1",
                     "--tp 2 or more with --sequence-parallel");
  if (o.given("--fsdp") && o.given("--zero"))
    throw InputError({}, "--fsdp", "given with --zero: both choose how the model state is sharded",
                     "one of --fsdp full|grad-op|hybrid or --zero 1|2|3");
  if (!o.scale.empty()) {
    // The scaling curve runs each node count on all of its GPUs with the DP they leave.
    for (const char* flag : {"--gpus", "--dp"})
      if (o.given(flag))
        throw InputError({}, flag, "given with --scale, which runs every node count on all its GPUs",
                         std::string("--scale without ") + flag + ", or " + flag + " without --scale");
  } else if (o.given("--scaling")) {
    throw InputError({}, "--scaling", "says how --scale keeps the global batch, and --scale is not given",
                     "--scale 1,2,4 --scaling weak|strong");
  }
}

struct Point {
  long nodes = 0;
  work::TrainResult r;
};

// The nearest global batch at or above `batch` that Megatron accepts for the layout: whole
// micro-batches on every DP rank, in groups of PP under the interleaved schedule.
long batch_multiple(long batch, const work::ParallelLayout& l, const work::MemoryOptions& memory) {
  const long unit = memory.micro_batch * l.dp * (l.vpp > 1 && l.pp > 1 ? l.pp : 1);
  return std::max(1L, (batch + unit - 1) / unit) * unit;
}

}  // namespace

std::string TrainOptions::run() const {
  if (list) {
    report::TextTable t({"name", "kind", "parameters", "source"});
    for (const auto& e : work::model_library())
      t.add_row({e.name, e.kind, fmt::format("{:.3g}B", e.params / 1e9), e.source.substr(0, 90)});
    return t.render();
  }
  if (format != "table" && format != "json") throw InputError({}, "--format", "got '" + format + "'", "table, json");
  // Check the trace file can be written before any work, so a typo costs nothing; it is written
  // only once the step is modelled, whole (no 0-byte file from a run that fails).
  if (!trace.empty()) {
    auto inputs = cluster_inputs(cluster);
    inputs.insert(inputs.end(),
                  {{"--model-file", model_file}, {"--compute-profile", compute_profile}, {"--input", input}});
    refuse_same_file(inputs, {{"--trace", trace}});
    check_writable(trace, "--trace");
  }
  const work::ModelSpec m = model_of(*this);
  work::TrainOptions o;
  o.record_timeline = !trace.empty();
  if (!compute_profile.empty()) {
    const auto profile =
        probe::profile_from_json(read_text_file(compute_profile, "--compute-profile"), compute_profile);
    // The precision's GEMM as cuBLAS runs it: fp32 training runs TF32 tensor cores; FP8's
    // linear layers are not in the probe's set.
    const std::string key = precision == "fp32" ? "tf32" : precision;
    double best = 0;
    std::string shape;
    if (profile.gpu)
      for (const auto& g : profile.gpu->gemms)
        if (g.precision == key && g.tflops > best) {
          best = g.tflops;
          shape = fmt::format("{} GEMM {}x{}x{}", g.precision, g.m, g.n, g.k);
        }
    if (!(best > 0))
      throw InputError({compute_profile, 0, 0}, "gpu.gemm", "no " + key + " GEMM measured in the profile",
                       "a profile from `gpufabric probe --save` on a GPU (bf16, fp16 or tf32 GEMMs)");
    o.gemm_tflops = best;
    o.gemm_source = fmt::format("{} in {}", shape, compute_profile);
  }
  if (!background.empty()) {
    const BackgroundCollective b = parse_background("--background", background);
    o.background_op = b.op;
    o.background_bytes = b.bytes;
  }
  o.layout.tp = parse_whole("--tp", tp, 1, 1 << 16);
  o.layout.pp = parse_whole("--pp", pp, 1, 1 << 16);
  o.layout.cp = parse_whole("--cp", cp, 1, 1 << 16);
  o.layout.ep = parse_whole("--ep", ep, 1, 1 << 16);
  o.layout.vpp = parse_whole("--vpp", vpp, 1, 1024);
  if (!etp.empty()) o.layout.etp = parse_whole("--etp", etp, 1, 1 << 16);
  if (!first_stage_layers.empty())
    o.layout.split.first_stage_layers = parse_whole("--first-stage-layers", first_stage_layers, 1, 100000);
  if (!last_stage_layers.empty())
    o.layout.split.last_stage_layers = parse_whole("--last-stage-layers", last_stage_layers, 1, 100000);
  o.layout.split.account_for_embedding = account_embedding;
  o.layout.split.account_for_loss = account_loss;
  o.layout.split.layout = pipeline_layout;
  o.moe_overlap = parse_name_or_throw(work::kMoeOverlapNames, moe_overlap, "--moe-overlap");
  o.moe_overlap_given = given("--moe-overlap");
  check_combinations(*this, o.layout);
  o.layout.overlap_p2p_comm = overlap_p2p_comm;
  o.layout.sequence_parallel = sequence_parallel;
  o.layout.tp_comm_overlap = tp_comm_overlap;
  o.order = work::parse_rank_order(order, "--order");
  o.memory.micro_batch = parse_whole("--micro-batch", micro_batch, 1, 1 << 20);
  // 0 to the model: micro-batch x DP, no accumulation.
  // The step is simulated micro-batch by micro-batch, so time grows with the batch: 2^30 sequences
  // of Llama 3.1 8B on one DGX H100 took about a minute; 2^20 takes a fraction of a second, and
  // is above every published batch (LLMs: DeepSeek-V3's 15,360 sequences; vision: the 64-128k
  // image batches of the large-batch ResNet-50 runs).
  const long global = global_batch.empty() ? 0 : parse_whole("--global-batch", global_batch, 1, kMaxGlobalBatch);
  o.memory.recompute = parse_name_or_throw(work::kRecomputeNames, recompute, "--recompute");
  o.memory.attention = parse_name_or_throw(work::kAttentionNames, attention, "--attention");
  o.memory.kernels = parse_name_or_throw(work::kKernelsNames, kernels, "--kernels");
  o.memory.precision = parse_name_or_throw(work::kPrecisionNames, precision, "--precision");
  const long z = parse_whole("--zero", zero, 0, 3);
  o.memory.sharding = z == 1   ? work::Sharding::zero1
                      : z == 2 ? work::Sharding::zero2
                      : z == 3 ? work::Sharding::zero3
                               : work::Sharding::none;
  if (!fsdp.empty()) o.memory.sharding = parse_name_or_throw(work::kFsdpNames, fsdp, "--fsdp");
  o.memory.distributed_optimizer = distributed_optimizer;
  if (overlap_param_gather && !distributed_optimizer)
    throw InputError({}, "--overlap-param-gather", "overlaps the distributed optimizer's all-gathers, and it is off",
                     "--distributed-optimizer --overlap-param-gather");
  o.memory.overlap_param_gather = overlap_param_gather;
  if (grad_reduce_bf16 &&
      (o.memory.sharding == work::Sharding::fsdp_full || o.memory.sharding == work::Sharding::fsdp_hybrid ||
       o.memory.sharding == work::Sharding::zero3))
    throw InputError({}, "--grad-reduce-in-bf16", "applies to DDP and the distributed optimizer's reductions",
                     "without --fsdp full|hybrid and --zero 3");
  o.memory.grad_reduce_bf16 = grad_reduce_bf16;
  o.memory.cross_entropy_fusion = cross_entropy_fusion;
  o.memory.bucket_bytes = static_cast<double>(parse_whole("--bucket-mb", bucket_mb, 1, 1 << 16)) * 1024 * 1024;
  o.memory.head_token_fraction = parse_positive("--head-tokens", head_tokens, 1.0);
  if (scaling != "weak" && scaling != "strong")
    throw InputError({}, "--scaling", "got '" + scaling + "'", "weak, strong");

  const hw::Catalog catalog = cluster.load_catalog();
  std::optional<work::InputWorkload> input_workload;
  work::PipelineOptions input_options;
  if (!input.empty()) {
    input_options = parse_pipeline_options(input_source, input_decode, input_memory, input_prefetch, input_loader_cores,
                                           "", false, input_network_fs);
    input_workload = work::load_workload(input, "--input");
  } else {
    for (const char* flag : {"--source", "--network-fs", "--decode", "--memory", "--prefetch", "--loader-cores"})
      if (given(flag)) throw InputError({}, flag, "describes the input pipeline", "--input NAME|FILE with it");
  }
  std::vector<long> node_counts;
  if (!scale.empty())
    for (const auto& n : split_list(scale)) node_counts.push_back(parse_whole("--scale", n, 1, 1 << 20));
  std::vector<Point> points;
  long base_dp = 0;
  const long asked_batch = global > 0 ? global : m.global_batch;
  std::string cluster_header;  // the first evaluation's cluster, with what its overrides changed
  std::string gpu_name;        // its GPU, for the error band
  auto evaluate = [&](const std::string& nodes_text) {
    ClusterOptions c = cluster;
    if (!nodes_text.empty()) c.nodes = nodes_text;
    const topo::Topology t(c.load_spec(catalog), catalog);
    if (cluster_header.empty()) {
      gpu_name = t.gpu_spec().name;
      cluster_header = fmt::format("# cluster: {} node{} x {} {}, network {}\n", t.nodes(), t.nodes() == 1 ? "" : "s",
                                   t.gpus_per_node(), t.gpu_spec().name, t.spec().network.tech);
      for (const auto& note : t.notes()) cluster_header += "# note: " + note + "\n";
    }
    work::TrainOptions oo = o;
    if (input_workload) {
      oo.input = work::model_pipeline(t, catalog, *input_workload, input_options);
      oo.input_name = input_workload->name;
    }
    const long model_parallel = oo.layout.tp * oo.layout.pp * oo.layout.cp;
    const long job_gpus = nodes_text.empty() && !gpus.empty() ? parse_whole("--gpus", gpus, 1, t.gpu_count()) : 0;
    oo.gpus = job_gpus;
    const long used = job_gpus > 0 ? job_gpus : t.gpu_count();
    if (used % model_parallel != 0)
      throw InputError({}, "--tp", fmt::format("TP x PP x CP = {} does not divide the {} GPUs", model_parallel, used),
                       "a model-parallel size dividing the GPU count");
    const long auto_dp = used / model_parallel;
    oo.layout.dp = dp.empty() || !nodes_text.empty() ? auto_dp : parse_whole("--dp", dp, 1, 1L << 24);
    if (base_dp == 0) base_dp = oo.layout.dp;
    // --global-batch, or the model's published one, is the headline run's; weak scaling keeps its
    // batch per GPU at the other node counts.
    oo.global_batch = asked_batch;
    if (!nodes_text.empty() && asked_batch > 0 && scaling == "weak")
      oo.global_batch = asked_batch / base_dp * oo.layout.dp;
    if (global == 0 && oo.global_batch > 0) oo.global_batch = batch_multiple(oo.global_batch, oo.layout, o.memory);
    if (oo.global_batch == 0) oo.global_batch = o.memory.micro_batch * oo.layout.dp;
    return std::pair{t.gpu_count(), work::train_step(t, m, oo)};
  };
  std::size_t headline = 0;
  if (node_counts.empty()) {
    points.push_back({0, evaluate("").second});
  } else {
    // The headline is the run --nodes (or the preset) describes; without it in the list, the largest.
    const long asked_nodes = cluster.load_spec(catalog).nodes;
    headline = node_counts.size() - 1;
    for (std::size_t i = 0; i < node_counts.size(); ++i)
      if (node_counts[i] == asked_nodes) headline = i;
    points.resize(node_counts.size());
    points[headline] = {node_counts[headline], evaluate(std::to_string(node_counts[headline])).second};
    for (std::size_t i = 0; i < node_counts.size(); ++i)
      if (i != headline) points[i] = {node_counts[i], evaluate(std::to_string(node_counts[i])).second};
  }
  const auto& r = points[headline].r;
  const std::string batch_line =
      global > 0 ? fmt::format("{} sequences per step (--global-batch)", r.global_batch)
      : m.global_batch > 0
          ? fmt::format("{} sequences per step ({}'s published batch{}: {})", r.global_batch, m.name,
                        r.global_batch != m.global_batch
                            ? fmt::format(" {}, rounded to whole micro-batches per DP rank", m.global_batch)
                            : std::string(),
                        m.global_batch_source)
          : fmt::format("{} sequences per step (micro-batch x DP: no published batch for {}; give --global-batch)",
                        r.global_batch, m.name);
  const auto params = work::count_parameters(m);
  // How far held-out public runs of this GPU family and model class fell from the model: the band
  // is of throughput, so the step time moves the other way.
  const band::Band step_band = band::BandTable::builtin().lookup("training", validate::training_classes(gpu_name, m));
  if (!trace.empty()) {
    const std::string process =
        fmt::format("GPU 0 (stage 0 stands for every stage): {} on {} GPUs, TP {} PP {} DP {} CP {} EP {}", m.name,
                    r.gpus, o.layout.tp, o.layout.pp, o.layout.dp, o.layout.cp, o.layout.ep);
    std::vector<std::pair<std::string, std::string>> meta{{"step_time_s", fmt::format("{:.6g}", r.step_s)},
                                                          {"bottleneck", r.bottleneck}};
    for (std::size_t i = 0; i < r.assumptions.size(); ++i)
      meta.push_back({fmt::format("assumption {}", i + 1), r.assumptions[i]});
    write_whole(trace, report::chrome_trace(r.timeline, process, meta), "--trace");
  }
  if (format == "json") {
    nlohmann::json j;
    j["model"] = m.name;
    j["parameters"] = params.total;
    // The layout of the headline run, so a sweep's rows say what each one ran (DP follows the GPUs).
    const long model_parallel = o.layout.tp * o.layout.pp * o.layout.cp;
    j["layout"] = {{"gpus", r.gpus},
                   {"tp", o.layout.tp},
                   {"pp", o.layout.pp},
                   {"dp", r.gpus / model_parallel},
                   {"cp", o.layout.cp},
                   {"ep", o.layout.ep},
                   {"etp", o.layout.expert_tp()},
                   {"vpp", o.layout.vpp},
                   {"micro_batch", o.memory.micro_batch},
                   {"micro_batches", r.micro_batches},
                   {"sequence_parallel", o.layout.sequence_parallel}};
    j["step_time_s"] = r.step_s;
    j["step_time_band_s"] = report::band_json(step_band, r.step_s, band::Direction::inverse);
    j["tokens_per_s"] = r.tokens_per_s;
    j["tokens_per_s_band"] = report::band_json(step_band, r.tokens_per_s, band::Direction::same);
    j["samples_per_s"] = r.samples_per_s;
    j["tflops_per_gpu"] = r.hardware_tflops_per_gpu;
    j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
    j["mfu"] = r.mfu;
    j["hfu"] = r.hfu;
    j["global_batch"] = r.global_batch;
    j["global_batch_from"] = batch_line;
    j["memory_per_gpu_GiB"] = r.memory.total / (1024.0 * 1024 * 1024);
    j["gpu_memory_GiB"] = r.gpu_memory / (1024.0 * 1024 * 1024);
    j["memory"] = report::memory_json(r.memory);
    j["fits"] = r.fits;
    // A layout that does not fit never runs: its step time is what it would be with the memory.
    j["hypothetical"] = !r.fits;
    if (!r.fits) {
      j["memory_over_GiB"] = (r.memory.total - r.gpu_memory) / (1024.0 * 1024 * 1024);
      nlohmann::json f = nlohmann::json::array();
      for (const auto& option : r.fit_options)
        f.push_back({{"change", option.change}, {"memory_per_gpu_GiB", option.memory / (1024.0 * 1024 * 1024)}});
      j["fit_options"] = f;
    }
    j["breakdown"] = {{"compute", r.breakdown.compute_s},
                      {"tp_communication", r.breakdown.tp_s},
                      {"dp_exposed", r.breakdown.dp_exposed_s},
                      {"optimizer", r.breakdown.optimizer_s},
                      {"pipeline_bubble", r.breakdown.pp_bubble_s},
                      {"pipeline_p2p", r.breakdown.pp_p2p_s},
                      {"cp_exposed", r.breakdown.cp_s},
                      {"ep_all_to_all", r.breakdown.ep_s},
                      {"sm_contention", r.breakdown.sm_contention_s},
                      {"data_stall", r.breakdown.data_stall_s}};
    j["bottleneck"] = r.bottleneck;
    j["assumptions"] = r.assumptions;
    if (!node_counts.empty()) {
      nlohmann::json s = nlohmann::json::array();
      j["headline_nodes"] = points[headline].nodes;
      for (const auto& p : points) {
        const double speedup = p.r.samples_per_s / points.front().r.samples_per_s;
        const double gpus_ratio = static_cast<double>(p.r.gpus) / static_cast<double>(points.front().r.gpus);
        s.push_back({{"nodes", p.nodes},
                     {"gpus", p.r.gpus},
                     {"global_batch", p.r.global_batch},
                     {"fits", p.r.fits},
                     {"step_time_s", p.r.step_s},
                     {"tokens_per_s", p.r.tokens_per_s},
                     {"samples_per_s", p.r.samples_per_s},
                     {"speedup", speedup},
                     {"efficiency", speedup / gpus_ratio}});
      }
      j["scaling"] = s;
    }
    return j.dump(2) + "\n";
  }
  std::string out;
  if (!r.fits)
    out += fmt::format(
        "DOES NOT FIT: {:.1f} GiB per GPU needed, the GPU has {:.1f} GiB (nvidia-smi); every figure below is "
        "hypothetical\n",
        r.memory.total / (1024.0 * 1024 * 1024), r.gpu_memory / (1024.0 * 1024 * 1024));
  out += cluster_header;
  out += fmt::format("# model: {} ({:.3g}B parameters{}), {} precision, micro-batch {}, {} micro-batches per step\n",
                     m.name, params.total / 1e9,
                     m.moe ? fmt::format(", {:.3g}B active", params.active / 1e9) : std::string(), precision,
                     o.memory.micro_batch, r.micro_batches);
  // EP runs on the experts' own grid (Megatron's MoE parallel folding), so it does not multiply
  // the GPUs; it and the virtual stages are still part of the layout the user reads back.
  out += fmt::format(
      "# layout: TP {} x PP {} x DP {} x CP {} on {} GPUs{}{}{}\n", o.layout.tp, o.layout.pp,
      r.gpus / (o.layout.tp * o.layout.pp * o.layout.cp), o.layout.cp, r.gpus,
      o.layout.ep > 1 ? fmt::format(", EP {} x ETP {} (the experts' own grid)", o.layout.ep, o.layout.expert_tp()) : "",
      o.layout.vpp > 1 ? fmt::format(", VPP {}", o.layout.vpp) : "", sequence_parallel ? ", sequence parallel" : "");
  out += fmt::format("# global batch: {}\n", batch_line);
  out +=
      fmt::format("step time          {:.4g} s  {}{}\n", r.step_s, band::describe(step_band, band::Direction::inverse),
                  r.fits ? "" : "  (hypothetical: does not fit)");
  if (r.tokens_per_s > 0)
    out += fmt::format("tokens/s           {:.4g}  {}\n", r.tokens_per_s,
                       band::describe(step_band, band::Direction::same));
  out += fmt::format("samples/s          {:.4g}\n", r.samples_per_s);
  out += fmt::format("TFLOP/s per GPU    {:.1f} model, {:.1f} hardware (MFU {:.1f}%, HFU {:.1f}%)\n",
                     r.model_tflops_per_gpu, r.hardware_tflops_per_gpu, 100 * r.mfu, 100 * r.hfu);
  out += fmt::format("memory per GPU     {:.1f} GiB of {:.1f} GiB{}\n", r.memory.total / (1024.0 * 1024 * 1024),
                     r.gpu_memory / (1024.0 * 1024 * 1024),
                     r.fits ? std::string()
                            : fmt::format("  (does not fit: {:.1f} GiB over)",
                                          (r.memory.total - r.gpu_memory) / (1024.0 * 1024 * 1024)));
  if (!r.fits) {
    std::string fixes;
    for (const auto& option : r.fit_options) {
      if (!fixes.empty()) fixes += "; ";
      fixes += fmt::format("{} ({:.1f} GiB)", option.change, option.memory / (1024.0 * 1024 * 1024));
    }
    out += fmt::format("would fit with     {}\n",
                       fixes.empty() ? std::string("no single change of recomputation, sequence parallelism, optimizer "
                                                   "sharding, micro-batch, TP or PP; combine them, or use more GPUs")
                                     : fixes);
  }
  report::TextTable b({"part", "seconds", "share"}, {report::TextTable::Align::left, report::TextTable::Align::right,
                                                     report::TextTable::Align::right});
  auto row = [&](const char* name, double s) {
    b.add_row({name, fmt::format("{:.4g}", s), fmt::format("{:.1f}%", 100 * s / r.step_s)});
  };
  row("compute", r.breakdown.compute_s);
  row("tensor-parallel collectives", r.breakdown.tp_s);
  row("data-parallel sync (exposed)", r.breakdown.dp_exposed_s);
  if (r.breakdown.sm_contention_s > 0) row("compute slowed by NCCL's SMs", r.breakdown.sm_contention_s);
  if (o.layout.pp > 1) {
    row("pipeline bubble", r.breakdown.pp_bubble_s);
    row("pipeline send/recv", r.breakdown.pp_p2p_s);
  }
  if (o.layout.cp > 1) row("context-parallel exchange (exposed)", r.breakdown.cp_s);
  if (o.layout.ep > 1) row("expert all-to-all", r.breakdown.ep_s);
  row("optimizer", r.breakdown.optimizer_s);
  if (!input.empty()) row("data stall (input pipeline)", r.breakdown.data_stall_s);
  out += "\n" + b.render();
  out += "\n" + report::memory_table(r.memory, r.gpu_memory);
  out += fmt::format("\nbottleneck: {}\n", r.bottleneck);
  if (!node_counts.empty()) {
    report::TextTable s({"nodes", "GPUs", "step (s)", "samples/s", "speedup", "efficiency"});
    for (const auto& p : points) {
      const double speedup = p.r.samples_per_s / points.front().r.samples_per_s;
      const double ratio = static_cast<double>(p.r.gpus) / static_cast<double>(points.front().r.gpus);
      const bool head = &p == &points[headline];
      s.add_row({std::to_string(p.nodes) + (head ? " *" : ""), std::to_string(p.r.gpus),
                 fmt::format("{:.4g}{}", p.r.step_s, p.r.fits ? "" : " (no fit)"),
                 fmt::format("{:.4g}", p.r.samples_per_s), fmt::format("{:.2f}x", speedup),
                 fmt::format("{:.1f}%", 100 * speedup / ratio)});
    }
    out += "\nscaling (" + scaling + "; * the headline run above, speedup against the first):\n" + s.render();
  }
  out += "\nassumptions:\n";
  for (const auto& a : r.assumptions) out += "  " + a + "\n";
  for (const auto& a : r.memory.assumptions) out += "  " + a + "\n";
  return out;
}

}  // namespace gf::cli
