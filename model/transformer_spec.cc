// TransformerSpec: derived counts, validation, YAML input and the loader of either file kind.
#include "model/transformer_spec.h"

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "model/error.h"
#include "model/hf_config.h"
#include "model/input_file.h"
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
  const int64_t biases = bias ? qkv_width() + hidden + mlp_up_width() + hidden : qkv_bias ? qkv_width() : 0;
  const int64_t norm_params =
      (norm == NormKind::layernorm ? 2 * 2 * hidden : 2 * hidden) + (qk_norm ? 2 * head_dim() : 0);
  return linear_weights_per_layer() + biases + norm_params;
}

int64_t TransformerSpec::embedding_params() const {
  return vocab * hidden + (positions == PositionKind::learned ? position_rows() * hidden : 0);
}

int64_t TransformerSpec::non_layer_params() const {
  const int64_t final_norm = norm == NormKind::layernorm ? 2 * hidden : hidden;
  const int64_t lm_head = tied_embeddings ? 0 : vocab * hidden;
  return embedding_params() + final_norm + lm_head;
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
  if (spec.seq_len > kMostSeqLen) fail("seq_len", "must be at most 2^24");
  if (spec.position_table > 0 && spec.position_table < spec.seq_len) {
    fail("position_table", std::to_string(spec.position_table) + " learned positions, fewer than the sequence of " +
                               std::to_string(spec.seq_len) + " tokens (seq_len or --seq): the tokens past them "
                               "have no position to look up");
  }
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

void read_architecture_fields(const YamlMap& map, TransformerSpec& spec) {
  spec.mlp = map.get_choice("mlp", {"gelu", "swiglu"}, "gelu") == "gelu" ? MlpKind::gelu
                                                                           : MlpKind::swiglu;
  spec.norm = map.get_choice("norm", {"layernorm", "rmsnorm"}, "layernorm") == "layernorm"
                  ? NormKind::layernorm
                  : NormKind::rmsnorm;
  spec.positions = map.get_choice("positions", {"learned", "rope"}, "learned") == "learned"
                       ? PositionKind::learned
                       : PositionKind::rope;
  for (const char* rotary : {"rope_theta", "rotary_percent", "rope_scaling_factor"}) {
    if (map.has(rotary) && spec.positions != PositionKind::rope) map.fail(rotary, "the model's positions are learned");
  }
  spec.rope_theta = map.get_double("rope_theta", 1, 1e12, kDefaultRopeTheta);
  spec.rotary_percent = map.get_double("rotary_percent", 0.01, 1, 1);
  spec.rope_scaling_factor = map.get_double("rope_scaling_factor", 1, 1e6, 0);
  spec.norm_epsilon = map.get_double("norm_epsilon", 1e-12, 0.1, kDefaultNormEpsilon);
  spec.bias = map.get_bool("bias", true);
  spec.qkv_bias = map.get_bool("qkv_bias", false);
  if (spec.bias && spec.qkv_bias) map.fail("qkv_bias", "biases on q, k and v alone, and `bias` puts one on every linear");
  spec.tied_embeddings = map.get_bool("tied_embeddings", true);
  spec.dropout = map.get_bool("dropout", false);
  spec.sliding_window = map.get_int("sliding_window", 1, 1 << 24, 0);
  spec.qk_norm = map.get_bool("qk_norm", false);
  if (map.has("position_table") && spec.positions != PositionKind::learned) {
    map.fail("position_table", "the model's positions are rotary");
  }
  spec.position_table = map.get_int("position_table", 1, 1 << 24, 0);
  if (map.has("approximations")) {  // written by to_yaml for a config.json's model (hf_architecture.h)
    const YAML::Node details = map.get_node("approximations");
    if (!details.IsSequence()) map.fail("approximations", "expected a list of texts, each a detail priced as its nearest");
    for (const YAML::Node& item : details) {
      if (!item.IsScalar()) map.fail("approximations", "expected a list of texts, each a detail priced as its nearest");
      spec.approximations.push_back(item.as<std::string>());
    }
  }
}

TransformerSpec transformer_spec_from_yaml(const YAML::Node& node, const std::string& source,
                                           const SpecOverrides& overrides) {
  const YamlMap map(node, source, "model spec");
  if (map.has("axo_plan")) {
    map.fail("axo_plan", "a plan (plan.yaml), not a model spec: its model is the one under model:");
  }
  constexpr int64_t big = int64_t(1) << 40;
  // A config.json under another name reads as YAML (JSON is YAML): say what it is.
  if (!map.has("name") && map.has("model_type")) {
    map.fail("model_type", "a Hugging Face config.json's key, in a file read as a model spec (YAML): name the "
                           "file *.json to read it as a config.json");
  }
  TransformerSpec spec;
  spec.name = map.get_string("name");
  spec.source = map.get_string("source", "");
  spec.layers = map.get_int("layers", 1, kMostLayers);
  spec.hidden = map.get_int("hidden", 1, 1 << 20);  // validate()'s bounds, here with the line
  spec.heads = map.get_int("heads", 1, 1 << 20);
  spec.kv_heads = map.get_int("kv_heads", 1, 1 << 20, spec.heads);
  spec.ffn_hidden = map.get_int("ffn_hidden", 1, 1 << 24, 4 * spec.hidden);
  read_architecture_fields(map, spec);
  if (spec.mlp == MlpKind::swiglu && !map.has("ffn_hidden")) {  // as a config.json's intermediate_size
    map.fail("ffn_hidden", "missing: a gated MLP (mlp: swiglu) has no default width (4 * hidden is a plain "
                           "MLP's; Llama's is about 8/3 * hidden)");
  }
  spec.seq_len = overridable_int(map, "seq_len", kMostSeqLen, overrides.seq_len, overrides.missing_seq_len);
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

bool is_hf_config_path(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = char(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".json";
}

TransformerSpec load_transformer_spec(const std::string& path, const SpecOverrides& overrides) {
  const bool is_json = is_hf_config_path(path);
  if (!is_json) {
    TransformerSpec spec = transformer_spec_from_yaml(load_yaml_file(path), path, overrides);
    validate(spec, path);
    return spec;
  }
  return transformer_spec_from_hf_text(read_input_file(path), path, overrides);
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
  if (spec.rope_theta != kDefaultRopeTheta) node["rope_theta"] = spec.rope_theta;
  if (spec.rotary_percent != 1) node["rotary_percent"] = spec.rotary_percent;
  if (spec.rope_scaling_factor > 0) node["rope_scaling_factor"] = spec.rope_scaling_factor;
  if (spec.norm_epsilon != kDefaultNormEpsilon) node["norm_epsilon"] = spec.norm_epsilon;
  if (spec.qkv_bias) node["qkv_bias"] = true;
  if (spec.sliding_window > 0) node["sliding_window"] = spec.sliding_window;
  if (spec.position_table > 0) node["position_table"] = spec.position_table;
  if (spec.qk_norm) node["qk_norm"] = true;
  for (const std::string& detail : spec.approximations) node["approximations"].push_back(detail);
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
