// The architecture details of a config.json beyond its shape (see hf_architecture.h).
#include "model/hf_architecture.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>

#include "model/error.h"
#include "model/hf_fields.h"

namespace axo {

namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A number of `config` within [low, high], else InputError naming it.
double bounded_number(const nlohmann::json& config, const char* key, double fallback, double low, double high,
                      const std::string& source) {
  const double value = hf_number(config, key, fallback, source);
  if (!(value >= low && value <= high)) {
    throw InputError(source + ": field '" + key + "': " + config[key].dump() + " is not from " + number_text(low) +
                     " to " + number_text(high));
  }
  return value;
}

// "model_type qwen2", or "architectures GPTJForCausalLM" for a config without a model_type.
std::string kind_text(const nlohmann::json& config, const std::string& source) {
  const std::string type = hf_string(config, "model_type", "", source), architecture = hf_first_architecture(config);
  return type.empty() && !architecture.empty() ? "architectures " + architecture : "model_type " + type;
}

template <size_t N>
using Families = std::array<std::string_view, N>;

// Families with biases on q, k and v alone (transformers' Qwen2Attention: q_proj, k_proj, v_proj
// with bias=True, o_proj without); StableLM says so with use_qkv_bias.
constexpr Families<3> kQkvBiasFamilies = {"qwen", "qwen2", "qwen2_vl"};
// Families with RMSNorms of each head's q and k (Megatron-LM's --qk-layernorm); StableLM's
// qk_layernorm is the LayerNorm alike.
constexpr Families<2> kQkNormFamilies = {"qwen3", "gemma3_text"};

void read_biases(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  spec.qkv_bias = !spec.bias && (hf_family_in(config, kQkvBiasFamilies, source) ||
                                 hf_bool(config, "use_qkv_bias", false, source));
  // A gated family's biases on some linears only (Llama's attention_bias or mlp_bias alone); a
  // plain family's attention without them (GPT-NeoX's attention_bias: false).
  const bool attention = hf_bool(config, "attention_bias", spec.bias, source);
  const bool mlp = hf_bool(config, "mlp_bias", spec.bias, source);
  if (attention != spec.bias || mlp != spec.bias) {
    const bool on_attention = attention != spec.bias;
    const std::string which = on_attention ? "attention's" : "MLP's";
    const std::string key = on_attention ? "attention_bias" : "mlp_bias";
    spec.approximations.push_back(
        spec.bias ? "no biases on the " + which + " linears (" + key + ": false), priced with them"
                  : "biases on the " + which + " linears only (" + key + ": true), priced without them");
  }
  spec.qk_norm = hf_family_in(config, kQkNormFamilies, source);
  if (hf_bool(config, "qk_layernorm", false, source)) {  // StableLM's: a LayerNorm for each head
    spec.approximations.push_back("a LayerNorm of each head's q and k (qk_layernorm), priced without them");
  }
  if (hf_family_in(config, Families<1>{"olmo2"}, source)) {
    spec.approximations.push_back("RMSNorms of q and k over the whole projection, and norms after each "
                                  "sublayer (model_type olmo2), priced without them");
  }
  if (hf_family_in(config, Families<1>{"olmo"}, source)) {  // transformers' OlmoLayerNorm has no weight
    spec.approximations.push_back("LayerNorms without weights or biases (model_type olmo), priced as RMSNorms");
  }
  if (config.contains("clip_qkv") && !config["clip_qkv"].is_null()) {
    spec.approximations.push_back("q, k and v clamped to +-" + config["clip_qkv"].dump() +
                                  " (clip_qkv), priced without it");
  }
}

// transformers v5's rope_parameters (its rope_theta, rope_type, factors and partial_rotary_factor),
// or an empty object; refused where it is one per layer type (a mapping of mappings).
nlohmann::json rope_parameters(const nlohmann::json& config, const std::string& source) {
  if (!config.contains("rope_parameters") || !config["rope_parameters"].is_object()) return nlohmann::json::object();
  const nlohmann::json& parameters = config["rope_parameters"];
  for (const auto& [name, value] : parameters.items()) {
    if (value.is_object()) {
      throw InputError(source + ": field 'rope_parameters': one per layer type ('" + name + "'), which axo does not read");
    }
  }
  return parameters;
}

// The fraction of each head's channels that rotate, by the key the family's transformers class
// reads: GPT-NeoX's rotary_pct (default 0.25), GPT-J's and CodeGen's rotary_dim (CodeGen's default
// 64; GPT-J's null rotates every channel), the others' partial_rotary_factor (Phi's default 0.5,
// StableLM's 0.25, else 1); transformers v5's rope_parameters holds it where a config has them.
double rotary_fraction(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source) {
  if (hf_family_in(config, Families<1>{"gpt_neox"}, source)) {
    return bounded_number(config, "rotary_pct", 0.25, 0.01, 1, source);
  }
  if (hf_family_in(config, Families<2>{"gptj", "codegen"}, source)) {
    const bool codegen = hf_family_in(config, Families<1>{"codegen"}, source);
    const int64_t dim = hf_int(config, {"rotary_dim"}, source, codegen ? 64 : spec.head_dim());
    return std::min(1.0, double(dim) / double(spec.head_dim()));
  }
  const double fallback = hf_family_in(config, Families<2>{"phi", "persimmon"}, source) ? 0.5
                          : hf_family_in(config, Families<1>{"stablelm"}, source)      ? 0.25
                                                                                        : 1.0;
  const double fraction = bounded_number(config, "partial_rotary_factor", fallback, 0.01, 1, source);
  return bounded_number(rope_parameters(config, source), "partial_rotary_factor", fraction, 0.01, 1, source);
}

// Rope scaling: none (absent, {} or rope_type default), Llama 3.1's as Megatron-LM's
// --use-rope-scaling applies it (rope_type llama3 with low 1, high 4 and 8192 original positions),
// else an approximation. transformers v5 keeps it in rope_parameters.
void read_rope_scaling(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  const char* key = config.contains("rope_parameters") && !config["rope_parameters"].is_null() ? "rope_parameters"
                                                                                               : "rope_scaling";
  if (!config.contains(key) || config[key].is_null()) return;
  const nlohmann::json& scaling = config[key];
  if (!scaling.is_object()) throw InputError(source + ": field '" + key + "': expected an object or null");
  const std::string type = hf_string(scaling, "rope_type", hf_string(scaling, "type", "default", source), source);
  if (type == "default") return;
  const bool megatrons = type == "llama3" && hf_number(scaling, "low_freq_factor", 1, source) == 1 &&
                         hf_number(scaling, "high_freq_factor", 4, source) == 4 &&
                         hf_number(scaling, "original_max_position_embeddings", 8192, source) == 8192;
  if (!megatrons) {
    spec.approximations.push_back("rope scaling " + scaling.dump() + " (" + key + ")");
    return;
  }
  if (!scaling.contains("factor") || scaling["factor"].is_null()) {
    throw InputError(source + ": field 'rope_scaling': llama3 scaling without its factor");
  }
  spec.rope_scaling_factor = bounded_number(scaling, "factor", 8, 1, 1e6, source);
}

void read_rotary(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  for (const char* key : {"rope_theta", "rotary_emb_base"}) {
    if (config.contains(key) && !config[key].is_null()) {
      spec.rope_theta = bounded_number(config, key, kDefaultRopeTheta, 1, 1e12, source);
      break;
    }
  }
  spec.rope_theta = bounded_number(rope_parameters(config, source), "rope_theta", spec.rope_theta, 1, 1e12, source);
  spec.rotary_percent = rotary_fraction(config, spec, source);
  read_rope_scaling(config, spec, source);
}

// Attention and MLP computed side by side from the block's input (GPT-J, CodeGen, Phi, Cohere
// always; transformers' GPTNeoXConfig use_parallel_residual and FalconConfig parallel_attn default
// to it), priced one after the other.
void read_parallel_block(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  constexpr Families<4> always = {"gptj", "codegen", "phi", "cohere"};
  std::string key;
  if (hf_family_in(config, always, source)) key = kind_text(config, source);
  if (hf_bool(config, "use_parallel_residual", hf_family_in(config, Families<1>{"gpt_neox"}, source), source)) {
    key = "use_parallel_residual";
  }
  if (hf_bool(config, "parallel_attn", hf_family_in(config, kFalconFamilies, source), source)) key = "parallel_attn";
  if (hf_bool(config, "new_decoder_architecture", false, source)) key = "new_decoder_architecture";
  if (!key.empty()) {
    spec.approximations.push_back("attention and MLP side by side from one input (" + key +
                                  "), priced one after the other");
  }
}

// transformers' activations by name (activations.py ACT2CLS, its 24 names as read in 2026): a name
// outside them is no model transformers builds, where it was priced as the family's own.
constexpr std::array<const char*, 24> kKnownActivations = {
    "gelu",       "gelu_10",    "gelu_fast", "gelu_new",     "gelu_python", "gelu_pytorch_tanh",
    "gelu_python_tanh", "gelu_accurate", "hardswish", "laplace", "leaky_relu", "linear",
    "mish",       "quick_gelu", "relu",      "relu2",        "relu6",       "sigmoid",
    "silu",       "sqrtsoftplus", "swish",   "tanh",         "prelu",       "xielu"};

// The activation, where it is not the MLP kind's: SiLU for a gated MLP, GELU (any of its forms) for a plain one.
void read_activation(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  const std::string act = hf_activation(config, spec.mlp == MlpKind::swiglu ? "silu" : "gelu", source);
  if (std::find(kKnownActivations.begin(), kKnownActivations.end(), act) == kKnownActivations.end() &&
      act != "swiglu") {
    std::string known;
    for (const char* name : kKnownActivations) known += std::string(known.empty() ? "" : ", ") + name;
    throw InputError(source + ": the MLP's activation (hidden_act, hidden_activation or activation_function) '" + act +
                     "' is none of transformers' activations (" + known + ")");
  }
  const bool gelu = act.rfind("gelu", 0) == 0 || act == "quick_gelu";
  const bool silu = act == "silu" || act == "swish" || act == "swiglu";
  if (spec.mlp == MlpKind::swiglu && !silu) {
    spec.approximations.push_back("a gated MLP of " + act + ", priced as SwiGLU's");
  } else if (spec.mlp == MlpKind::gelu && !gelu) {
    spec.approximations.push_back("an MLP of " + act + ", priced as GELU's");
  }
}

}  // namespace

std::string hf_activation(const nlohmann::json& config, const std::string& fallback, const std::string& source) {
  for (const char* key : {"hidden_activation", "hidden_act", "activation_function"}) {
    if (config.contains(key) && !config[key].is_null()) return hf_string(config, key, fallback, source);
  }
  return fallback;
}

void read_hf_architecture(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  read_biases(config, spec, source);
  if (spec.positions == PositionKind::rope) read_rotary(config, spec, source);
  read_parallel_block(config, spec, source);
  read_activation(config, spec, source);
  for (const char* key : {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}) {
    if (config.contains(key) && !config[key].is_null()) {
      spec.norm_epsilon = bounded_number(config, key, kDefaultNormEpsilon, 1e-12, 0.1, source);
      break;
    }
  }
  // Qwen2's and Qwen3's window only with use_sliding_window, on the layers from max_window_layers
  // (default 28) on; Mistral's and the others' wherever sliding_window is set.
  const bool switched = hf_family_in(config, Families<2>{"qwen2", "qwen3"}, source);
  const bool windowed = !switched || (hf_bool(config, "use_sliding_window", false, source) &&
                                      hf_number(config, "max_window_layers", 28, source) < double(spec.layers));
  if (windowed) spec.sliding_window = hf_int(config, {"sliding_window"}, source, 0);
}

}  // namespace axo
