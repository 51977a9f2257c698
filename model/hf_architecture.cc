// The architecture details of a config.json beyond its shape (see hf_architecture.h).
#include "model/hf_architecture.h"

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

// Families with biases on q, k and v alone (transformers' Qwen2Attention: q_proj, k_proj, v_proj
// with bias=True, o_proj without); StableLM says so with use_qkv_bias.
constexpr std::array<std::string_view, 3> kQkvBiasFamilies = {"qwen", "qwen2", "qwen2_vl"};
// Families with RMSNorms on q and k (Qwen3's and Gemma 3's per head, OLMo 2's over the projection).
constexpr std::array<std::string_view, 3> kQkNormFamilies = {"qwen3", "gemma3_text", "olmo2"};

void read_biases(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  spec.qkv_bias = !spec.bias && (hf_family_in(config, kQkvBiasFamilies, source) ||
                                 hf_bool(config, "use_qkv_bias", false, source));
  const bool attention = hf_bool(config, "attention_bias", false, source);
  const bool mlp = hf_bool(config, "mlp_bias", false, source);
  if (!spec.bias && (attention || mlp)) {
    spec.approximations.push_back(std::string("biases on the ") + (attention ? "attention's" : "MLP's") +
                                  " linears only (" + (attention ? "attention_bias" : "mlp_bias") +
                                  ": true), priced without them");
  }
  if (hf_family_in(config, kQkNormFamilies, source)) {
    spec.approximations.push_back("RMSNorms of q and k (model_type " + hf_model_type(config, source) +
                                  "), priced without them");
  }
}

void read_rotary(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  for (const char* key : {"rope_theta", "rotary_emb_base"}) {
    if (config.contains(key) && !config[key].is_null()) {
      spec.rope_theta = bounded_number(config, key, kDefaultRopeTheta, 1, 1e12, source);
      break;
    }
  }
  // transformers' GPTNeoXConfig: rotary_pct=0.25 where the config leaves it out.
  const double neox_default = hf_model_type(config, source) == "gpt_neox" ? 0.25 : 1;
  spec.rotary_percent = bounded_number(config, "rotary_pct", neox_default, 0.01, 1, source);
  spec.rotary_percent = bounded_number(config, "partial_rotary_factor", spec.rotary_percent, 0.01, 1, source);
  const int64_t dim = hf_int(config, {"rotary_dim"}, source, 0);
  if (dim > 0) spec.rotary_percent = std::min(1.0, double(dim) / double(spec.head_dim()));
  if (!config.contains("rope_scaling") || config["rope_scaling"].is_null()) return;
  const nlohmann::json& scaling = config["rope_scaling"];
  const std::string type = scaling.is_object() ? hf_string(scaling, "rope_type", hf_string(scaling, "type", "", source),
                                                          source) : "";
  const bool megatrons = type == "llama3" && hf_number(scaling, "low_freq_factor", 1, source) == 1 &&
                         hf_number(scaling, "high_freq_factor", 4, source) == 4 &&
                         hf_number(scaling, "original_max_position_embeddings", 8192, source) == 8192;
  if (megatrons) {
    spec.rope_scaling_factor = bounded_number(scaling, "factor", 8, 1, 1e6, source);
  } else {
    spec.approximations.push_back("rope scaling " + scaling.dump() + " (rope_scaling)");
  }
}

// Attention and MLP computed side by side from the block's input (GPT-J, Phi, Cohere always;
// transformers' GPTNeoXConfig use_parallel_residual and FalconConfig parallel_attn default to it),
// priced one after the other.
void read_parallel_block(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  constexpr std::array<std::string_view, 3> always = {"gptj", "phi", "cohere"};
  constexpr std::array<std::string_view, 1> neox = {"gpt_neox"};
  constexpr std::array<std::string_view, 3> falcon = {"falcon", "RefinedWeb", "RefinedWebModel"};
  std::string key;
  if (hf_family_in(config, always, source)) key = "model_type " + hf_model_type(config, source);
  if (hf_bool(config, "use_parallel_residual", hf_family_in(config, neox, source), source)) key = "use_parallel_residual";
  if (hf_bool(config, "parallel_attn", hf_family_in(config, falcon, source), source)) key = "parallel_attn";
  if (!key.empty()) {
    spec.approximations.push_back("attention and MLP side by side from one input (" + key +
                                  "), priced one after the other");
  }
}

// The activation, where it is not the MLP kind's: SiLU for a gated MLP, GELU (any of its forms) for a plain one.
void read_activation(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  const std::string act = hf_activation(config, spec.mlp == MlpKind::swiglu ? "silu" : "gelu", source);
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
  if (hf_bool(config, "use_sliding_window", true, source)) {  // Qwen2's off switch
    spec.sliding_window = hf_int(config, {"sliding_window"}, source, 0);
  }
}

}  // namespace axo
