// The shape of a decoder-only transformer and the counts derived from it.
//
// A TransformerSpec is what every part of axo agrees a model is: the planner
// costs it, the executor trains it. It is read from the YAML presets in
// configs/models/ or from a Hugging Face config.json.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

namespace axo {

enum class MlpKind { gelu, swiglu };
enum class NormKind { layernorm, rmsnorm };
enum class PositionKind { learned, rope };
// The training precision. fp8 is Transformer Engine's recipe (Megatron-LM's
// --fp8-format hybrid, torchtitan's float8): the linear layers' GEMMs take
// fp8 inputs (E4M3 forward, E5M2 gradients) scaled per tensor by amax, while
// weights, activations, gradients and the attention core stay bf16
// (model/cost_fp8.h prices the difference).
enum class Precision { fp32, fp16, bf16, fp8 };

const char* to_string(MlpKind kind);
const char* to_string(NormKind kind);
const char* to_string(PositionKind kind);
const char* to_string(Precision precision);
// Bytes of one stored element: 4 for fp32, 2 for fp16 and bf16, and 2 for fp8,
// whose tensors are stored in bf16 (only the GEMMs' inputs are cast to fp8).
int bytes_per_element(Precision precision);
// "fp8" -> Precision::fp8 ...; an unknown name is an InputError naming `where`
// and the four names.
Precision parse_precision(const std::string& text, const std::string& where);

// RoFormer's rotary base θ, the one Llama 2 and GPT-NeoX use and Megatron-LM's --rotary-base
// defaults to.
inline constexpr double kDefaultRopeTheta = 10000;
// The norms' epsilon Megatron-LM's --norm-epsilon defaults to (GPT-2's, Llama 2's and 3's).
inline constexpr double kDefaultNormEpsilon = 1e-5;

// A parameter count for people: "0.8M" below a billion, "1.31B" above.
std::string parameter_count_text(int64_t count);

// The most layers a spec may have: the search's candidates (splits, interleavings, recomputed
// layers) grow with the layer count, about 7 s at 1000 (tens of minutes at 10^5).
inline constexpr int64_t kMostLayers = 1000;
// The longest sequence (seq_len, --seq): 2^24 tokens keeps every count derived from it in 64 bits.
inline constexpr int64_t kMostSeqLen = int64_t(1) << 24;

struct TransformerSpec {
  std::string name;
  std::string source;           // where the shape comes from (paper, model card)
  int64_t layers = 0;
  int64_t hidden = 0;           // h
  int64_t heads = 0;            // a (query heads)
  int64_t kv_heads = 0;         // key/value heads; == heads unless grouped-query attention
  int64_t ffn_hidden = 0;       // MLP width (4h for GPT)
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  PositionKind positions = PositionKind::learned;
  // Details the exports state and the cost model does not price (each a Megatron-LM flag):
  double rope_theta = kDefaultRopeTheta;  // rotary positions' base (Llama 3: 500000)
  double rotary_percent = 1;              // of each head's channels that rotate (GPT-NeoX: 0.25)
  double rope_scaling_factor = 0;         // Llama 3.1's rope scaling (8); 0: none
  double norm_epsilon = kDefaultNormEpsilon;
  bool qkv_bias = false;                  // biases on q, k and v alone (Qwen2), where `bias` is off
  // Attention over the last N tokens only (Mistral 7B v0.1: 4096); 0: every earlier token. The
  // cost model prices full causal attention: plan refuses a window shorter than the sequence.
  int64_t sliding_window = 0;
  // Rows of the learned position table where it is longer than the sequence trained (GPT-2's
  // n_positions 1024 at --seq 512); 0: seq_len. The exports' --max-position-embeddings.
  int64_t position_table = 0;
  bool qk_norm = false;  // RMSNorms of each head's q and k (Qwen3, Gemma 3): Megatron's --qk-layernorm
  bool bias = true;             // biases on every linear layer (GPT) or none (Llama; qkv_bias below)
  bool tied_embeddings = true;  // LM head shares the token embedding
  bool dropout = false;         // attention and hidden dropout (Megatron-LM 2022 trained with it)
  int64_t seq_len = 0;          // s
  int64_t vocab = 0;            // V
  int64_t global_batch = 0;     // B, sequences per iteration
  Precision precision = Precision::bf16;
  // What the model's config.json says of its architecture that axo prices as the nearest it
  // models, each naming its field ("q/k/v biases without the other linears' (model_type qwen2)"):
  // the exports that state a model's architecture refuse one with any (hf_config.h).
  std::vector<std::string> approximations;

  int64_t head_dim() const { return hidden / heads; }
  int64_t position_rows() const { return position_table > 0 ? position_table : seq_len; }
  // Output width of the fused QKV projection: (a + 2·kv)·(h/a).
  int64_t qkv_width() const { return (heads + 2 * kv_heads) * head_dim(); }
  // Output width of the MLP's first projection: ffn, or 2·ffn for SwiGLU (gate and up).
  int64_t mlp_up_width() const { return mlp == MlpKind::swiglu ? 2 * ffn_hidden : ffn_hidden; }
  // Weights of the four linear layers of one block (no biases).
  int64_t linear_weights_per_layer() const;
  // Every parameter of one block: linear weights, biases, norms.
  int64_t params_per_layer() const;
  // Token embedding and the learned position table (its position_rows()).
  int64_t embedding_params() const;
  // Token embedding, position embedding, final norm and (untied) LM head.
  int64_t non_layer_params() const;
  int64_t parameter_count() const;
  // Model FLOPs of one iteration (forward + backward, no recompute), counting
  // 2 FLOPs per multiply-add of every GEMM including attention scores and
  // context and the LM head. For GPT this is Narayanan et al.'s (SC'21)
  // 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)).
  double model_flops_per_iteration() const;
};

// Throws InputError naming the field when the spec is not a usable model.
void validate(const TransformerSpec& spec, const std::string& source);

// What the command line sets over a model file's own values (--batch, --seq; 0: the file's). A
// file may leave out what an override supplies: a YAML spec its global_batch or seq_len, a
// config.json its max_position_embeddings.
struct SpecOverrides {
  int64_t global_batch = 0;
  int64_t seq_len = 0;
  int64_t missing_seq_len = 0;  // a seq_len for a file without one only (train: its positions stay the file's)
};

class YamlMap;
// The architecture fields of a model spec (mlp, norm, positions and the rotary details, bias,
// qkv_bias, tied_embeddings, dropout, norm_epsilon, sliding_window, approximations), each checked,
// from `map` into `spec` (the corpus's model families read them too).
void read_architecture_fields(const YamlMap& map, TransformerSpec& spec);

// From a parsed YAML mapping; `source` names the file in messages.
TransformerSpec transformer_spec_from_yaml(const YAML::Node& node, const std::string& source,
                                           const SpecOverrides& overrides = {});
// Whether `path` names a Hugging Face config (its extension .json, in any case).
bool is_hf_config_path(const std::string& path);
// Reads a .yaml/.yml spec (validated) or a .json Hugging Face config, by extension, with the
// overrides applied.
TransformerSpec load_transformer_spec(const std::string& path, const SpecOverrides& overrides = {});
YAML::Node to_yaml(const TransformerSpec& spec);

}  // namespace axo
