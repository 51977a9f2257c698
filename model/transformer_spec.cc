// TransformerSpec: derived counts, validation, YAML and Hugging Face input.
#include "model/transformer_spec.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <nlohmann/json.hpp>

#include "model/error.h"
#include "model/json_text.h"
#include "model/yaml_fields.h"

namespace axo {

const char* to_string(MlpKind kind) { return kind == MlpKind::gelu ? "gelu" : "swiglu"; }
const char* to_string(NormKind kind) { return kind == NormKind::layernorm ? "layernorm" : "rmsnorm"; }
const char* to_string(PositionKind kind) { return kind == PositionKind::learned ? "learned" : "rope"; }
const char* to_string(Precision precision) {
  switch (precision) {
    case Precision::fp32: return "fp32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "?";
}
int bytes_per_element(Precision precision) { return precision == Precision::fp32 ? 4 : 2; }

Precision parse_precision(const std::string& text, const std::string& where) {
  for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8}) {
    if (text == to_string(p)) return p;
  }
  throw InputError(where + ": precision '" + text + "': expected fp32, fp16, bf16 or fp8");
}

int64_t TransformerSpec::linear_weights_per_layer() const {
  // QKV [qkv_width, h], attention out [h, h], MLP up [mlp_up_width, h], MLP down [h, ffn].
  return hidden * qkv_width() + hidden * hidden + hidden * mlp_up_width() + ffn_hidden * hidden;
}

int64_t TransformerSpec::params_per_layer() const {
  const int64_t biases = bias ? qkv_width() + hidden + mlp_up_width() + hidden : 0;
  const int64_t norm_params = norm == NormKind::layernorm ? 2 * 2 * hidden : 2 * hidden;
  return linear_weights_per_layer() + biases + norm_params;
}

int64_t TransformerSpec::non_layer_params() const {
  const int64_t token_embedding = vocab * hidden;
  const int64_t position_embedding = positions == PositionKind::learned ? seq_len * hidden : 0;
  const int64_t final_norm = norm == NormKind::layernorm ? 2 * hidden : hidden;
  const int64_t lm_head = tied_embeddings ? 0 : vocab * hidden;
  return token_embedding + position_embedding + final_norm + lm_head;
}

std::string parameter_count_text(int64_t count) {
  char text[32];
  if (count < 1000000000) std::snprintf(text, sizeof text, "%.1fM", double(count) / 1e6);
  else std::snprintf(text, sizeof text, "%.2fB", double(count) / 1e9);
  return text;
}

int64_t TransformerSpec::parameter_count() const {
  return layers * params_per_layer() + non_layer_params();
}

double TransformerSpec::model_flops_per_iteration() const {
  const double tokens = double(global_batch) * double(seq_len);
  // Forward: 2 FLOPs per weight per token in the linear layers and the LM head,
  // plus attention scores (QKᵀ) and context (AV): 2·s·h each per token.
  const double forward_per_token = 2.0 * double(layers) * double(linear_weights_per_layer()) +
                                   2.0 * double(vocab) * double(hidden) +
                                   4.0 * double(layers) * double(seq_len) * double(hidden);
  return 3.0 * tokens * forward_per_token;  // backward = 2 × forward
}

void validate(const TransformerSpec& spec, const std::string& source) {
  auto fail = [&](const std::string& field, const std::string& message) {
    throw InputError(source + ": field '" + field + "': " + message);
  };
  if (spec.name.empty()) fail("name", "must not be empty");
  if (!is_one_printable_line(spec.name)) fail("name", kNotOnePrintableLine);
  if (spec.layers < 1) fail("layers", "must be at least 1");
  if (spec.hidden < 1) fail("hidden", "must be at least 1");
  if (spec.heads < 1) fail("heads", "must be at least 1");
  if (spec.hidden % spec.heads != 0) {
    fail("heads", std::to_string(spec.heads) + " heads do not divide hidden " +
                      std::to_string(spec.hidden));
  }
  if (spec.kv_heads < 1 || spec.kv_heads > spec.heads || spec.heads % spec.kv_heads != 0) {
    fail("kv_heads", std::to_string(spec.kv_heads) + " must divide heads " +
                         std::to_string(spec.heads));
  }
  if (spec.ffn_hidden < 1) fail("ffn_hidden", "must be at least 1");
  if (spec.seq_len < 1) fail("seq_len", "must be at least 1");
  if (spec.vocab < 1) fail("vocab", "must be at least 1");
  if (spec.global_batch < 1) fail("global_batch", "must be at least 1");
  // Keep every count the model derives within 64-bit integers.
  if (spec.hidden > (1 << 20)) fail("hidden", "must be at most 2^20");
  if (spec.ffn_hidden > (1 << 24)) fail("ffn_hidden", "must be at most 2^24");
  if (spec.vocab > (1 << 24)) fail("vocab", "must be at most 2^24");
  if (spec.seq_len > (1 << 24)) fail("seq_len", "must be at most 2^24");
  if (spec.layers > kMostLayers) {
    fail("layers", std::to_string(spec.layers) + " is more than " + std::to_string(kMostLayers) +
                       " (the deepest published models have under 200; the search's candidates grow with layers)");
  }
  if (double(spec.layers) * double(spec.hidden) * double(spec.hidden + 3 * spec.ffn_hidden) > 1e16) {
    fail("layers", "the model has more than 10^16 parameters");
  }
}

namespace {

// A count the command line may override: the file's (checked, and required) unless `override` is
// set, when the file may leave it out; `missing` (when set) stands in for it where the file has none.
int64_t overridable_int(const YamlMap& map, const char* key, int64_t max, int64_t override, int64_t missing = 0) {
  const int64_t absent = override > 0 ? override : missing;
  const int64_t from_file = absent > 0 ? map.get_int(key, 1, max, absent) : map.get_int(key, 1, max);
  return override > 0 ? override : from_file;  // a value the file does give is still checked
}

}  // namespace

TransformerSpec transformer_spec_from_yaml(const YAML::Node& node, const std::string& source,
                                           const SpecOverrides& overrides) {
  const YamlMap map(node, source, "model spec");
  constexpr int64_t big = int64_t(1) << 40;
  TransformerSpec spec;
  spec.name = map.get_string("name");
  spec.source = map.get_string("source", "");
  spec.layers = map.get_int("layers", 1, kMostLayers);
  spec.hidden = map.get_int("hidden", 1, 1 << 24);
  spec.heads = map.get_int("heads", 1, 1 << 20);
  spec.kv_heads = map.get_int("kv_heads", 1, 1 << 20, spec.heads);
  spec.ffn_hidden = map.get_int("ffn_hidden", 1, 1 << 26, 4 * spec.hidden);
  spec.mlp = map.get_choice("mlp", {"gelu", "swiglu"}, "gelu") == "gelu" ? MlpKind::gelu
                                                                           : MlpKind::swiglu;
  spec.norm = map.get_choice("norm", {"layernorm", "rmsnorm"}, "layernorm") == "layernorm"
                  ? NormKind::layernorm
                  : NormKind::rmsnorm;
  spec.positions = map.get_choice("positions", {"learned", "rope"}, "learned") == "learned"
                       ? PositionKind::learned
                       : PositionKind::rope;
  spec.bias = map.get_bool("bias", true);
  spec.tied_embeddings = map.get_bool("tied_embeddings", true);
  spec.dropout = map.get_bool("dropout", false);
  spec.seq_len = overridable_int(map, "seq_len", 1 << 24, overrides.seq_len, overrides.missing_seq_len);
  spec.vocab = map.get_int("vocab", 1, 1 << 24);
  spec.global_batch = overridable_int(map, "global_batch", big, overrides.global_batch);
  spec.precision = parse_precision(map.get_choice("precision", {"fp32", "fp16", "bf16", "fp8"}, "bf16"), source);
  map.reject_unknown_keys();
  if (spec.hidden % spec.heads != 0) {
    map.fail("heads", std::to_string(spec.heads) + " heads do not divide hidden " +
                          std::to_string(spec.hidden));
  }
  if (spec.heads % spec.kv_heads != 0) {
    map.fail("kv_heads", std::to_string(spec.kv_heads) + " does not divide heads " +
                             std::to_string(spec.heads));
  }
  return spec;
}

namespace {

// The first of `keys` present in `config` as an integer.
int64_t hf_int(const nlohmann::json& config, std::initializer_list<const char*> keys,
               const std::string& source, std::optional<int64_t> fallback = std::nullopt) {
  for (const char* key : keys) {
    if (!config.contains(key) || config[key].is_null()) continue;
    const nlohmann::json& v = config[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      throw InputError(source + ": field '" + key + "': expected a positive integer, got " +
                       v.dump());
    }
    return v.get<int64_t>();
  }
  if (fallback) return *fallback;
  throw InputError(source + ": field '" + *keys.begin() + "': missing from the config.json");
}

// Optional typed fields: absent or null gives the fallback, a wrong type an InputError.
std::string hf_string(const nlohmann::json& config, const char* key, const std::string& fallback,
                      const std::string& source) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_string()) throw InputError(source + ": field '" + key + "': expected a string");
  return config[key].get<std::string>();
}

bool hf_bool(const nlohmann::json& config, const char* key, bool fallback, const std::string& source) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_boolean()) throw InputError(source + ": field '" + key + "': expected true or false");
  return config[key].get<bool>();
}

double hf_number(const nlohmann::json& config, const char* key, double fallback, const std::string& source) {
  if (!config.contains(key) || config[key].is_null()) return fallback;
  if (!config[key].is_number()) throw InputError(source + ": field '" + key + "': expected a number");
  return config[key].get<double>();
}

// Families whose MLP is gated (gate_proj, up_proj, down_proj) whatever their hidden_act: Llama's
// SiLU (SwiGLU) and Gemma's GELU (GeGLU, which axo prices as SwiGLU: the same weights and GEMMs).
constexpr std::array<std::string_view, 13> kGatedFamilies = {
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo", "olmo2",
    "granite", "cohere"};
// Gated families whose LM head is tied to the embedding unless the config says otherwise
// (transformers' GemmaConfig and CohereConfig: tie_word_embeddings=True; LlamaConfig's is False).
constexpr std::array<std::string_view, 4> kTiedFamilies = {"gemma", "gemma2", "gemma3_text", "cohere"};

// Whether the config's model_type, else its first architecture ("GemmaForCausalLM"), lowercased,
// names one of `families` (an architecture by its prefix).
template <size_t N>
bool hf_family_in(const nlohmann::json& config, const std::array<std::string_view, N>& families,
                  const std::string& source) {
  const std::string type = hf_string(config, "model_type", "", source);
  if (!type.empty()) return std::find(families.begin(), families.end(), type) != families.end();
  if (!config.contains("architectures") || !config["architectures"].is_array() ||
      config["architectures"].empty() || !config["architectures"][0].is_string()) {
    return false;
  }
  std::string architecture = config["architectures"][0].get<std::string>();
  for (char& c : architecture) c = char(std::tolower((unsigned char)c));
  return std::any_of(families.begin(), families.end(), [&](std::string_view family) {
    return architecture.rfind(std::string(family) + "for", 0) == 0 ||
           architecture.rfind(std::string(family) + "model", 0) == 0;
  });
}

// A gated MLP: by the family (model_type or architectures), else a SiLU activation (a family
// axo does not know, as before): GPT-2, GPT-NeoX, OPT and the like have a plain GELU MLP.
bool hf_mlp_gated(const nlohmann::json& config, const std::string& source) {
  if (hf_family_in(config, kGatedFamilies, source)) return true;
  const std::string act =
      hf_string(config, "hidden_act", hf_string(config, "activation_function", "gelu", source), source);
  return act == "silu" || act == "swiglu";
}

// axo models dense transformers: a mixture-of-experts config (Mixtral's num_local_experts,
// Qwen-MoE's and OLMoE's num_experts, DeepSeek's n_routed_experts, num_experts_per_tok) is refused.
void refuse_mixture_of_experts(const nlohmann::json& config, const std::string& source) {
  for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok"}) {
    if (!config.contains(key) || !config[key].is_number()) continue;
    if (config[key].get<double>() <= 1) continue;  // one expert, or one per token of a single expert: dense
    throw InputError(source + ": field '" + key + "': " + config[key].dump() +
                     ": a mixture-of-experts model; axo plans dense transformers only");
  }
}

// Heads that divide the hidden size, and a head_dim (Gemma's, Mistral's) that is hidden/heads:
// TransformerSpec has heads of hidden/heads channels and cannot size any other attention.
void check_hf_heads(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source) {
  const int64_t head_dim = hf_int(config, {"head_dim"}, source, 0);
  if (head_dim > 0 && head_dim * spec.heads != spec.hidden) {
    throw InputError(source + ": field 'head_dim': " + std::to_string(head_dim) + " is not hidden_size / " +
                     "num_attention_heads = " + std::to_string(spec.hidden) + " / " + std::to_string(spec.heads) +
                     ": axo's model has heads of hidden/heads channels (attention " + std::to_string(spec.hidden) +
                     " wide, not " + std::to_string(spec.heads) + " x " + std::to_string(head_dim) + " = " +
                     std::to_string(spec.heads * head_dim) + ") and cannot size this one");
  }
  if (spec.hidden % spec.heads != 0) {
    throw InputError(source + ": field 'num_attention_heads': " + std::to_string(spec.heads) +
                     " does not divide hidden_size " + std::to_string(spec.hidden));
  }
  if (spec.heads % spec.kv_heads != 0) {
    throw InputError(source + ": the key/value heads (" + std::to_string(spec.kv_heads) +
                     ") do not divide num_attention_heads " + std::to_string(spec.heads));
  }
}

// Key/value heads: Llama's num_key_value_heads, Falcon's num_kv_heads (new_decoder_architecture)
// or multi_query (one), GPT-BigCode's multi_query; else one per head.
int64_t hf_kv_heads(const nlohmann::json& config, int64_t heads, const std::string& source) {
  const int64_t multi_query = hf_bool(config, "multi_query", false, source) ? 1 : heads;
  return hf_int(config, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, source, multi_query);
}

// Rotary positions: the Llama-like families, and any config naming a rotary setting (rope_theta,
// GPT-NeoX's rotary_pct, Falcon's rotary unless alibi); ALiBi (BLOOM, MPT, Falcon's alibi) has
// neither learned nor rotary positions, which axo does not model: refused.
PositionKind hf_positions(const nlohmann::json& config, bool llama_like, const std::string& source) {
  if (hf_bool(config, "alibi", false, source) || config.contains("alibi_bias_max")) {
    throw InputError(source + ": field 'alibi': ALiBi attention biases; axo prices learned or rotary positions");
  }
  const bool falcon = hf_string(config, "model_type", "", source) == "falcon";
  const bool rotary = llama_like || falcon || config.contains("rope_theta") || config.contains("rotary_pct") ||
                      config.contains("rotary_emb_base");
  return rotary ? PositionKind::rope : PositionKind::learned;
}

}  // namespace

TransformerSpec transformer_spec_from_hf_config(const nlohmann::json& config, const std::string& source,
                                                const SpecOverrides& overrides) {
  if (!config.is_object()) throw InputError(source + ": expected a JSON object");
  refuse_mixture_of_experts(config, source);
  TransformerSpec spec;
  spec.name = hf_string(config, "_name_or_path", "", source);  // empty, as absent: the model type's
  if (spec.name.empty()) spec.name = hf_string(config, "model_type", "hf-model", source);
  spec.source = source;
  spec.layers = hf_int(config, {"num_hidden_layers", "n_layer", "num_layers"}, source);
  spec.hidden = hf_int(config, {"hidden_size", "n_embd", "d_model"}, source);
  spec.heads = hf_int(config, {"num_attention_heads", "n_head"}, source);
  spec.kv_heads = hf_kv_heads(config, spec.heads, source);
  spec.ffn_hidden = hf_int(config, {"intermediate_size", "n_inner", "ffn_dim"}, source,
                           4 * spec.hidden);
  const int64_t absent_seq = overrides.seq_len > 0 ? overrides.seq_len : overrides.missing_seq_len;
  spec.seq_len = hf_int(config, {"max_position_embeddings", "n_positions", "n_ctx"}, source,
                        absent_seq > 0 ? std::optional<int64_t>(absent_seq) : std::nullopt);
  if (overrides.seq_len > 0) spec.seq_len = overrides.seq_len;
  spec.global_batch = overrides.global_batch;
  spec.vocab = hf_int(config, {"vocab_size"}, source);
  spec.mlp = hf_mlp_gated(config, source) ? MlpKind::swiglu : MlpKind::gelu;
  const bool llama_like = spec.mlp == MlpKind::swiglu || config.contains("rms_norm_eps");
  spec.norm = llama_like ? NormKind::rmsnorm : NormKind::layernorm;
  spec.positions = hf_positions(config, llama_like, source);
  // Biases: attention_bias where the config has it (Llama's, default off), Falcon's `bias`,
  // else the family's (gated families none, GPT-2 and the like all).
  spec.bias = hf_bool(config, "attention_bias", hf_bool(config, "bias", !llama_like, source), source);
  const bool tied_by_default = !llama_like || hf_family_in(config, kTiedFamilies, source);
  spec.tied_embeddings = hf_bool(config, "tie_word_embeddings", tied_by_default, source);
  spec.dropout = hf_number(config, "attention_dropout", 0, source) > 0 ||
                 hf_number(config, "attn_pdrop", 0, source) > 0;
  const std::string dtype = hf_string(config, "torch_dtype", "bfloat16", source);
  spec.precision = dtype == "float32" ? Precision::fp32
                   : dtype == "float16" ? Precision::fp16
                                        : Precision::bf16;
  check_hf_heads(config, spec, source);
  return spec;
}

TransformerSpec load_transformer_spec(const std::string& path, const SpecOverrides& overrides) {
  const bool is_json = path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (!is_json) {
    TransformerSpec spec = transformer_spec_from_yaml(load_yaml_file(path), path, overrides);
    validate(spec, path);
    return spec;
  }
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return transformer_spec_from_hf_text(text.str(), path, overrides);
}

TransformerSpec transformer_spec_from_hf_text(const std::string& text, const std::string& source,
                                              const SpecOverrides& overrides) {
  const nlohmann::json config = parse_json_text(text, source);
  return transformer_spec_from_hf_config(config, source, overrides);
}

YAML::Node to_yaml(const TransformerSpec& spec) {
  YAML::Node node;
  node["name"] = spec.name;
  if (!spec.source.empty()) node["source"] = spec.source;
  node["layers"] = spec.layers;
  node["hidden"] = spec.hidden;
  node["heads"] = spec.heads;
  node["kv_heads"] = spec.kv_heads;
  node["ffn_hidden"] = spec.ffn_hidden;
  node["mlp"] = to_string(spec.mlp);
  node["norm"] = to_string(spec.norm);
  node["positions"] = to_string(spec.positions);
  node["bias"] = spec.bias;
  node["tied_embeddings"] = spec.tied_embeddings;
  node["dropout"] = spec.dropout;
  node["seq_len"] = spec.seq_len;
  node["vocab"] = spec.vocab;
  node["global_batch"] = spec.global_batch;
  node["precision"] = to_string(spec.precision);
  return node;
}

}  // namespace axo
