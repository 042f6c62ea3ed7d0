#pragma once
// A model as the training and serving models see it: a transformer given by its architecture
// (layers, widths, heads, FFN, vocabulary, MoE and MLA where it has them), or a generic model
// given by its parameters, FLOPs and activation bytes per sample (CNNs and the like).
#include <optional>
#include <string>

#include "core/enum_names.hpp"

namespace gf::work {

enum class ModelKind { decoder, encoder, generic };
inline constexpr EnumNames<ModelKind, 3> kModelKindNames{
    {{ModelKind::decoder, "decoder"}, {ModelKind::encoder, "encoder"}, {ModelKind::generic, "generic"}}};
const char* to_string(ModelKind k);

// Mixture of experts: `experts` routed experts of `expert_ffn` width, `top_k` of them per token,
// plus `shared_experts` every token uses; the first `dense_layers` layers keep a dense FFN.
struct MoeSpec {
  int experts = 0;
  int top_k = 0;
  int shared_experts = 0;
  long expert_ffn = 0;
  int dense_layers = 0;
  double capacity_factor = 1.0;  // tokens an expert takes beyond its fair share (dispatch padding)
};

// DeepSeek's multi-head latent attention: queries and keys/values go through low-rank
// projections; keys carry a shared rotary part.
struct MlaSpec {
  long q_lora_rank = 0;  // 0: queries projected directly
  long kv_lora_rank = 0;
  long qk_nope_head_dim = 0;
  long qk_rope_head_dim = 0;
  long v_head_dim = 0;
};

struct ModelSpec {
  std::string name;
  ModelKind kind = ModelKind::decoder;
  // Transformer.
  long layers = 0;
  long hidden = 0;
  long heads = 0;
  long kv_heads = 0;  // = heads for multi-head attention; fewer for GQA, 1 for MQA
  long head_dim = 0;  // hidden / heads unless the model says otherwise
  long ffn = 0;       // intermediate width of a dense FFN
  bool gated_ffn = false;
  long seq = 0;          // training sequence length
  long max_context = 0;  // the longest context the released model takes (prompt + answer); seq unless given
  long vocab = 0;
  bool tied_embeddings = false;
  bool learned_positions = false;   // GPT-2/3-style position table (position_rows x hidden)
  long position_rows = 0;           // rows of that table (0: seq)
  bool parallel_attention = false;  // attention and FFN read one normalised input (GPT-J): one norm
  double extra_params = 0;          // small weights outside the blocks (BERT's pooler, segment table, ...)
  bool linear_bias = false;         // biases in the attention and FFN projections
  bool layer_norm = false;          // LayerNorm (weight and bias) rather than RMSNorm (weight)
  std::optional<MoeSpec> moe;
  std::optional<MlaSpec> mla;
  // Generic models (kind generic): what one sample costs.
  double params = 0;            // parameters
  double flops_per_sample = 0;  // forward pass, FLOPs (2 per multiply-add)
  double activation_bytes_per_sample = 0;
  // Bytes the step's kernels move through HBM per sample, forward and backward together, 16-bit
  // (0: not given, and the activations are taken to cross HBM five times).
  double step_hbm_bytes_per_sample = 0;
  // As the source publishes them, to check the architecture against (0: not given).
  double published_params = 0;
  double published_active_params = 0;
  std::string source;
  // The global batch (sequences per step) a published run of this model used, and where it is
  // published: what `train` steps when no --global-batch is given (0: none published).
  long global_batch = 0;
  std::string global_batch_source;

  [[nodiscard]] bool is_transformer() const { return kind != ModelKind::generic; }
  [[nodiscard]] long attention_width() const { return heads * head_dim; }  // Q's output width
};

}  // namespace gf::work
