// The architecture details of a config.json beyond its shape (see hf_architecture.h).
#include "model/hf_architecture.h"

#include <cstdio>

#include "model/error.h"
#include "model/hf_fields.h"

namespace axo {

namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// Biases the spec's one `bias` flag (every linear or none) does not hold.
void partial_biases(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source,
                    std::vector<std::string>& out) {
  const std::string type = hf_model_type(config, source);
  if (type == "qwen2" || type == "qwen") {  // Qwen2Attention's q_proj, k_proj, v_proj (bias=True), o_proj none
    out.push_back("q/k/v biases without the other linears' (model_type " + type + "), priced without them");
  }
  const bool attention = hf_bool(config, "attention_bias", false, source);
  const bool mlp = hf_bool(config, "mlp_bias", false, source);
  if (!spec.bias && (attention || mlp)) {
    out.push_back(std::string("biases on the ") + (attention ? "attention's" : "MLP's") + " linears only (" +
                  (attention ? "attention_bias" : "mlp_bias") + ": true), priced without them");
  }
}

// Rotary positions on a fraction of each head's channels.
void partial_rotary(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source,
                    std::vector<std::string>& out) {
  if (spec.positions != PositionKind::rope) return;
  // GPTNeoXConfig's rotary_pct defaults to 0.25 (transformers configuration_gpt_neox.py).
  const double neox_default = hf_model_type(config, source) == "gpt_neox" ? 0.25 : 1;
  for (const auto& [key, fallback] : {std::pair{"rotary_pct", neox_default}, {"partial_rotary_factor", 1.0}}) {
    const double fraction = hf_number(config, key, fallback, source);
    if (fraction < 1) {
      out.push_back("rotary positions on " + number_text(100 * fraction) + "% of each head's channels (" + key +
                    ": " + number_text(fraction) + ")");
      return;
    }
  }
  const int64_t dim = hf_int(config, {"rotary_dim"}, source, spec.head_dim());
  if (dim < spec.head_dim()) {
    out.push_back("rotary positions on " + std::to_string(dim) + " of each head's " +
                  std::to_string(spec.head_dim()) + " channels (rotary_dim)");
  }
}

// Attention and MLP computed side by side from the block's input (GPT-J, Phi, Cohere always;
// transformers' GPTNeoXConfig use_parallel_residual and FalconConfig parallel_attn default to it),
// priced one after the other.
void parallel_block(const nlohmann::json& config, const std::string& source, std::vector<std::string>& out) {
  const std::string type = hf_model_type(config, source);
  const bool falcon = type == "falcon" || type == "refinedweb" || type == "refinedwebmodel";
  std::string key;
  if (type == "gptj" || type == "phi" || type == "cohere") key = "model_type " + type;
  if (hf_bool(config, "use_parallel_residual", type == "gpt_neox", source)) key = "use_parallel_residual";
  if (hf_bool(config, "parallel_attn", falcon, source)) key = "parallel_attn";
  if (!key.empty()) out.push_back("attention and MLP side by side from one input (" + key + "), priced one after the other");
}

// The activation, where it is not the MLP kind's: SiLU for a gated MLP, GELU (any of its forms) for a plain one.
void activation(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source,
                std::vector<std::string>& out) {
  std::string key = "hidden_act";
  for (const char* name : {"hidden_activation", "hidden_act", "activation_function"}) {
    if (config.contains(name) && !config[name].is_null()) key = name;
  }
  const std::string act = hf_string(config, key.c_str(), spec.mlp == MlpKind::swiglu ? "silu" : "gelu", source);
  const bool gelu = act.rfind("gelu", 0) == 0 || act == "quick_gelu";
  const bool silu = act == "silu" || act == "swish" || act == "swiglu";
  if (spec.mlp == MlpKind::swiglu && !silu) {
    out.push_back("a gated MLP of " + act + " (" + key + "), priced as SwiGLU's");
  } else if (spec.mlp == MlpKind::gelu && !gelu) {
    out.push_back("an MLP of " + act + " (" + key + "), priced as GELU's");
  }
}

}  // namespace

double hf_rope_theta(const nlohmann::json& config, const std::string& source) {
  for (const char* key : {"rope_theta", "rotary_emb_base"}) {
    const double theta = hf_number(config, key, 0, source);
    if (config.contains(key) && !config[key].is_null() && !(theta >= 1 && theta <= 1e12)) {
      throw InputError(source + ": field '" + key + "': " + config[key].dump() + " is not a rotary base from 1 to 1e12");
    }
    if (theta > 0) return theta;
  }
  return kDefaultRopeTheta;
}

std::vector<std::string> hf_approximations(const nlohmann::json& config, const TransformerSpec& spec,
                                           const std::string& source) {
  std::vector<std::string> out;
  partial_biases(config, spec, source, out);
  const std::string type = hf_model_type(config, source);
  if (type == "qwen3" || type == "gemma3_text" || type == "olmo2") {
    out.push_back("q and k normalized per head (model_type " + type + "), priced without it");
  }
  partial_rotary(config, spec, source, out);
  parallel_block(config, source, out);
  activation(config, spec, source, out);
  if (config.contains("rope_scaling") && !config["rope_scaling"].is_null()) {
    out.push_back("rope scaling " + config["rope_scaling"].dump() + " (rope_scaling)");
  }
  for (const char* key : {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}) {
    const double epsilon = hf_number(config, key, 1e-5, source);
    if (epsilon != 1e-5) out.push_back("a norm epsilon of " + number_text(epsilon) + " (" + key + ")");
  }
  return out;
}

void refuse_sliding_window(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source) {
  if (!hf_bool(config, "use_sliding_window", true, source)) return;  // Qwen2's off switch
  const int64_t window = hf_int(config, {"sliding_window"}, source, spec.seq_len);
  if (window < spec.seq_len) {
    throw InputError(source + ": field 'sliding_window': attention over the last " + std::to_string(window) +
                     " tokens, fewer than the sequence of " + std::to_string(spec.seq_len) +
                     ": axo prices full causal attention (plan with --seq " + std::to_string(window) +
                     " or less, where the window holds the whole sequence)");
  }
}

}  // namespace axo
