#include "work/model_library.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"
#include "data/files.hpp"

namespace gf::work {

namespace {

constexpr std::string_view kDir = "data/models/";

ModelSpec read(const YAML::Node& root, const std::string& file) {
  if (!root.IsMap()) throw InputError(location_of(root, file), "", "a model file is a mapping", "docs/model-format.md");
  const Fields f(root, file, "model",
                 {"name",
                  "display_name",
                  "family",
                  "kind",
                  "params_total",
                  "params_total_rounding",
                  "params_total_exact",
                  "params_note",
                  "source",
                  "sources",
                  "note",
                  "estimates",
                  "layers",
                  "hidden",
                  "heads",
                  "kv_heads",
                  "head_dim",
                  "ffn",
                  "gated_ffn",
                  "activation",
                  "seq",
                  "max_context",
                  "vocab",
                  "vocab_used",
                  "tied_embeddings",
                  "position_embedding",
                  "position_table",
                  "rope_dims",
                  "token_type_embeddings",
                  "norm",
                  "embedding_norm",
                  "parallel_attention",
                  "attention_bias",
                  "ffn_bias",
                  "lm_head_bias",
                  "pooler",
                  "mlm_head",
                  "params_active",
                  "params_mtp",
                  "mtp_modules",
                  "moe",
                  "mla",
                  "params",
                  "flops_per_sample",
                  "macs_per_sample",
                  "flops_convention",
                  "activation_bytes_per_sample",
                  "step_hbm_bytes_per_sample",
                  "step_hbm_note",
                  "input",
                  "global_batch",
                  "global_batch_source"});
  ModelSpec m;
  m.name = f.text("name");
  m.kind = f.choice("kind", kModelKindNames);
  m.source = f.text("source");
  m.published_params = f.positive("params_total");
  if (f.has("params_total_exact")) m.published_params = f.positive("params_total_exact");
  if (f.has("global_batch")) {
    m.global_batch = f.integer("global_batch", 1, 1L << 24);
    m.global_batch_source = f.text("global_batch_source");
    if (m.global_batch_source.find_first_not_of(" \t") == std::string::npos)
      f.fail("global_batch_source", "a citation must not be empty");
  }
  if (m.kind == ModelKind::generic) {
    m.params = f.positive("params");
    m.flops_per_sample = f.physical("flops_per_sample", 1, physical::flops);
    m.activation_bytes_per_sample = f.physical("activation_bytes_per_sample", 1, physical::size);
    if (f.has("step_hbm_bytes_per_sample"))
      m.step_hbm_bytes_per_sample = f.physical("step_hbm_bytes_per_sample", 1, physical::size);
    m.published_active_params = m.published_params;
    return m;
  }
  m.layers = f.integer("layers", 1, 100000);
  m.hidden = f.integer("hidden", 1, 1L << 24);
  m.heads = f.integer("heads", 1, 1L << 16);
  m.kv_heads = f.integer_or("kv_heads", 1, m.heads, m.heads);
  if (m.heads % m.kv_heads != 0) f.fail("kv_heads", fmt::format("{} does not divide heads ({})", m.kv_heads, m.heads));
  m.head_dim = f.integer_or("head_dim", 1, 1L << 16, m.hidden / m.heads);
  m.ffn = f.integer("ffn", 1, 1L << 26);
  m.gated_ffn = f.flag("gated_ffn");
  m.seq = f.integer("seq", 1, 1L << 26);
  m.vocab = f.integer("vocab", 1, 1L << 26);
  m.tied_embeddings = f.flag("tied_embeddings");
  const std::string pos = f.choice("position_embedding", {"learned", "rope", "sinusoidal", "alibi", "none"});
  m.learned_positions = pos == "learned";
  // The context a released model takes: the file's max_context, else its training sequence;
  // a learned position table has that many rows unless the file says otherwise.
  m.max_context = f.integer_or("max_context", 1, 1L << 26, m.seq);
  m.position_rows = f.integer_or("position_table", 1, 1L << 26, m.max_context);
  m.layer_norm = f.choice("norm", {"layernorm", "rmsnorm"}) == "layernorm";
  m.parallel_attention = f.flag_or("parallel_attention", false);
  m.linear_bias = f.flag_or("attention_bias", false) || f.flag_or("ffn_bias", false);
  const double h = static_cast<double>(m.hidden);
  // Small weights outside the blocks, as docs/model-format.md counts them.
  m.extra_params += static_cast<double>(f.integer_or("token_type_embeddings", 0, 1 << 20, 0)) * h;
  if (f.flag_or("embedding_norm", false)) m.extra_params += (m.layer_norm ? 2 : 1) * h;
  if (f.flag_or("lm_head_bias", false)) m.extra_params += static_cast<double>(m.vocab);
  if (f.flag_or("pooler", false)) m.extra_params += h * h + h;
  if (f.flag_or("mlm_head", false)) m.extra_params += h * h + h + 2 * h + static_cast<double>(m.vocab);
  if (f.has("params_active")) m.published_active_params = f.positive("params_active");
  if (f.has("moe")) {
    const Fields e(
        f.node("moe"), file, "model.moe",
        {"experts", "top_k", "shared_experts", "expert_ffn", "dense_layers", "capacity_factor", "router_bias"});
    MoeSpec moe;
    moe.experts = static_cast<int>(e.integer("experts", 1, 1 << 20));
    moe.top_k = static_cast<int>(e.integer("top_k", 1, moe.experts));
    moe.shared_experts = static_cast<int>(e.integer_or("shared_experts", 0, 1 << 10, 0));
    moe.expert_ffn = e.integer("expert_ffn", 1, 1L << 26);
    const YAML::Node dense = e.node_or_null("dense_layers");
    if (dense && dense.IsSequence()) {
      moe.dense_layers = static_cast<int>(dense.size());  // counted; gpufabric puts them first
    } else if (dense) {
      moe.dense_layers = static_cast<int>(e.integer("dense_layers", 0, m.layers));
    }
    moe.capacity_factor = e.has("capacity_factor") ? e.positive("capacity_factor") : 1.0;
    m.moe = moe;
  }
  if (f.has("mla")) {
    const Fields a(f.node("mla"), file, "model.mla",
                   {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
    MlaSpec mla;
    mla.q_lora_rank = a.integer_or("q_lora_rank", 0, 1L << 20, 0);
    mla.kv_lora_rank = a.integer("kv_lora_rank", 1, 1L << 20);
    mla.qk_nope_head_dim = a.integer("qk_nope_head_dim", 1, 1L << 16);
    mla.qk_rope_head_dim = a.integer("qk_rope_head_dim", 0, 1L << 16);
    mla.v_head_dim = a.integer("v_head_dim", 1, 1L << 16);
    m.mla = mla;
  }
  return m;
}

}  // namespace

ModelSpec parse_model(const std::string& text, const std::string& file) { return read(parse_yaml(text, file), file); }

ModelSpec model_from_file(const std::string& path) { return parse_model(read_text_file(path, "--model-file"), path); }

std::vector<LibraryEntry> model_library() {
  std::vector<LibraryEntry> out;
  for (const auto& f : data::files_under(kDir, ".yaml")) {
    const std::string file(f.path);
    const YAML::Node root = parse_yaml(std::string(f.text), file);
    const ModelSpec m = read(root, file);
    out.push_back({m.name, root["display_name"] ? root["display_name"].Scalar() : m.name, to_string(m.kind),
                   root["params_total"].as<double>(), m.source});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

ModelSpec library_model(const std::string& name, const std::string& flag) {
  const std::string path = std::string(kDir) + name + ".yaml";
  if (const auto text = data::find(path)) return parse_model(std::string(*text), path);
  std::string names;
  for (const auto& e : model_library()) names += (names.empty() ? "" : ", ") + e.name;
  throw InputError({}, flag, "unknown model '" + name + "'", names + " (gpufabric train --list)");
}

}  // namespace gf::work
