// Hugging Face config.json input (see hf_config.h).
#include "model/hf_config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string_view>

#include "model/error.h"
#include "model/hf_architecture.h"
#include "model/hf_fields.h"
#include "model/json_text.h"

namespace axo {

namespace {

// Families whose MLP is gated (gate_proj, up_proj, down_proj) whatever their hidden_act: Llama's
// SiLU (SwiGLU) and Gemma's GELU (GeGLU, which axo prices as SwiGLU: the same weights and GEMMs).
constexpr std::array<std::string_view, 14> kGatedFamilies = {
    "llama", "mistral", "mixtral", "qwen", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3", "olmo",
    "olmo2", "granite", "cohere"};
// Gated families whose LM head is tied to the embedding unless the config says otherwise
// (transformers' GemmaConfig and CohereConfig: tie_word_embeddings=True; LlamaConfig's is False).
constexpr std::array<std::string_view, 4> kTiedFamilies = {"gemma", "gemma2", "gemma3_text", "cohere"};
// Plain-MLP families whose LM head is its own unless the config says otherwise (transformers'
// GPTNeoXConfig, GPTJConfig, PhiConfig and CodeGenConfig: tie_word_embeddings=False; GPT-2's, OPT's,
// Falcon's True).
constexpr std::array<std::string_view, 4> kUntiedFamilies = {"gpt_neox", "gptj", "phi", "codegen"};

// A gated MLP: by the family (model_type or architectures), else a SiLU activation (a family
// axo does not know, as before): GPT-2, GPT-NeoX, OPT and the like have a plain GELU MLP.
bool hf_mlp_gated(const nlohmann::json& config, const std::string& source) {
  if (hf_family_in(config, kGatedFamilies, source)) return true;
  const std::string act = hf_activation(config, "gelu", source);
  return act == "silu" || act == "swiglu";
}

// axo models dense transformers: a mixture-of-experts config (Mixtral's num_local_experts,
// Qwen-MoE's and OLMoE's num_experts, DeepSeek's n_routed_experts, ERNIE 4.5's moe_num_experts,
// num_experts_per_tok) is refused.
void refuse_mixture_of_experts(const nlohmann::json& config, const std::string& source) {
  for (const char* key :
       {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts", "num_experts_per_tok"}) {
    if (!config.contains(key) || !config[key].is_number()) continue;
    if (config[key].get<double>() <= 1) continue;  // one expert, or one per token of a single expert: dense
    throw InputError(source + ": field '" + key + "': " + config[key].dump() +
                     ": a mixture-of-experts model; axo plans dense transformers only");
  }
}

// axo models decoder-only causal language models: an encoder-decoder (T5, BART: is_encoder_decoder)
// or a model whose architectures are none of a causal LM's (BERT's ...ForMaskedLM) is refused.
void refuse_other_than_a_decoder(const nlohmann::json& config, const std::string& source) {
  if (hf_bool(config, "is_encoder_decoder", false, source)) {
    throw InputError(source + ": field 'is_encoder_decoder': an encoder-decoder model; axo plans decoder-only "
                     "transformers");
  }
  if (!config.contains("architectures") || !config["architectures"].is_array()) return;
  const nlohmann::json& architectures = config["architectures"];
  const auto causal = [](const nlohmann::json& name) {
    if (!name.is_string()) return false;
    const std::string text = name.get<std::string>();
    const auto ends_with = [&](std::string_view end) {
      return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
    };
    return ends_with("ForCausalLM") || ends_with("LMHeadModel");
  };
  if (!architectures.empty() && std::none_of(architectures.begin(), architectures.end(), causal)) {
    throw InputError(source + ": field 'architectures': " + architectures.dump() +
                     ": no causal language-model head (...ForCausalLM or ...LMHeadModel): an encoder, or a "
                     "multimodal model (...ForConditionalGeneration) whose other towers axo does not price; axo "
                     "plans decoder-only transformers");
  }
}

// State-space and recurrent models have blocks other than attention (Mamba's, RWKV's,
// RecurrentGemma's block_types), which a TransformerSpec's layers cannot hold: refused, naming the
// key that says so.
void refuse_other_blocks(const nlohmann::json& config, const std::string& source) {
  const std::string type = hf_string(config, "model_type", "", source);
  if (type == "mamba" || type == "mamba2" || type == "rwkv" || type == "recurrent_gemma") {
    throw InputError(source + ": field 'model_type': " + type +
                     " has blocks other than attention (state-space or recurrent); axo plans transformers");
  }
  for (const char* key : {"block_types", "layers_block_type"}) {
    if (!config.contains(key) || !config[key].is_array()) continue;
    const nlohmann::json& blocks = config[key];
    if (std::any_of(blocks.begin(), blocks.end(), [](const nlohmann::json& b) { return b != "attention"; })) {
      throw InputError(source + ": field '" + key + "': " + blocks.dump() +
                       ": blocks other than attention; axo plans transformers");
    }
  }
}

// BLOOM and MPT attend with ALiBi biases whether or not their config says so (MPT's under
// attn_config); Falcon's and others' `alibi` key is read by hf_positions.
void refuse_alibi_families(const nlohmann::json& config, const std::string& source) {
  const std::string type = hf_string(config, "model_type", "", source);
  if (type == "bloom" || type == "mpt") {
    throw InputError(source + ": field 'model_type': " + type +
                     " attends with ALiBi biases; axo prices learned or rotary positions");
  }
}

// OPT-350M's embedding is word_embed_proj_dim wide, projected in and out of the hidden size:
// a TransformerSpec's embedding is as wide as its hidden size.
void refuse_projected_embeddings(const nlohmann::json& config, const std::string& source) {
  const int64_t width = hf_int(config, {"word_embed_proj_dim"}, source, 0);
  const int64_t hidden = hf_int(config, {"hidden_size"}, source, 0);
  if (width > 0 && hidden > 0 && width != hidden) {
    throw InputError(source + ": field 'word_embed_proj_dim': " + std::to_string(width) + " is not hidden_size " +
                     std::to_string(hidden) + ": axo's embedding is as wide as the hidden size");
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

// The rows of the position table: max_position_embeddings (GPT-2's n_positions, n_ctx), Falcon's
// 2048 where its config leaves it out (FalconConfig's default); 0 where none is given.
int64_t hf_position_table(const nlohmann::json& config, const std::string& source) {
  return hf_int(config, {"max_position_embeddings", "n_positions", "n_ctx"}, source,
                hf_family_in(config, kFalconFamilies, source) ? 2048 : 0);
}

// A learned position table has max_position_embeddings (n_positions) rows: a longer --seq has no
// position to look up (GPT-2 at 8192 of its 1024); a shorter one keeps them (position_table).
void read_learned_positions(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  if (spec.positions != PositionKind::learned) return;
  const int64_t table = hf_position_table(config, source);
  if (table > 0 && spec.seq_len > table) {
    throw InputError(source + ": sequence length " + std::to_string(spec.seq_len) + " is longer than the " +
                     std::to_string(table) + " learned positions of max_position_embeddings (n_positions)");
  }
  spec.position_table = std::max(spec.seq_len, table);
}

// Keys that only a rotary config has: rope_theta, rope_scaling, GPT-NeoX's rotary_pct and
// rotary_emb_base, GPT-J's and CodeGen's rotary_dim, Phi's partial_rotary_factor.
constexpr std::array<const char*, 7> kRotaryKeys = {"rope_theta",      "rope_scaling", "rotary_pct",
                                                    "rotary_emb_base", "rotary_dim",   "partial_rotary_factor",
                                                    "rope_parameters"};

// Families whose positions are rotary whatever keys their config gives: Falcon (kFalconFamilies)
// and those whose configs may leave the rotary keys to transformers' defaults (GPT-NeoX's
// rotary_pct, GPT-J's and CodeGen's rotary_dim, Phi's and StableLM's partial_rotary_factor).
constexpr std::array<std::string_view, 5> kRotaryFamilies = {"gpt_neox", "gptj", "codegen", "phi", "stablelm"};

// Rotary positions: the Llama-like and rotary families unless alibi, and any config with a rotary
// key or `rotary: true`; ALiBi (BLOOM, MPT, Falcon's alibi) has neither learned nor rotary
// positions, which axo does not model: refused.
PositionKind hf_positions(const nlohmann::json& config, bool llama_like, const std::string& source) {
  if (hf_bool(config, "alibi", false, source) || config.contains("alibi_bias_max")) {
    throw InputError(source + ": field 'alibi': ALiBi attention biases; axo prices learned or rotary positions");
  }
  const bool rotary_family =
      hf_family_in(config, kFalconFamilies, source) || hf_family_in(config, kRotaryFamilies, source);
  const bool keyed = std::any_of(kRotaryKeys.begin(), kRotaryKeys.end(), [&](const char* key) {
    return config.contains(key) && !config[key].is_null();
  });
  const bool rotary = llama_like || rotary_family || keyed || hf_bool(config, "rotary", false, source);
  return rotary ? PositionKind::rope : PositionKind::learned;
}

// Layers, widths, heads, the sequence, the vocabulary and the MLP's kind and width.
void read_shape(const nlohmann::json& config, const SpecOverrides& overrides, TransformerSpec& spec,
                const std::string& source) {
  spec.layers = hf_int(config, {"num_hidden_layers", "n_layer", "num_layers"}, source);
  spec.hidden = hf_int(config, {"hidden_size", "n_embd", "d_model"}, source);
  spec.heads = hf_int(config, {"num_attention_heads", "n_head"}, source);
  spec.kv_heads = hf_kv_heads(config, spec.heads, source);
  const int64_t absent_seq = overrides.seq_len > 0 ? overrides.seq_len : overrides.missing_seq_len;
  spec.seq_len = overrides.seq_len > 0 ? overrides.seq_len : hf_position_table(config, source);
  if (spec.seq_len == 0) spec.seq_len = absent_seq;
  if (spec.seq_len == 0) {
    throw InputError(source + ": field 'max_position_embeddings': missing from the config.json: give the sequence "
                     "length with --seq");
  }
  spec.global_batch = overrides.global_batch;
  spec.vocab = hf_int(config, {"vocab_size"}, source);
  spec.mlp = hf_mlp_gated(config, source) ? MlpKind::swiglu : MlpKind::gelu;
  // A plain MLP is 4h wide where the config leaves it out (GPT-2's n_inner null); a gated one's
  // width has no such rule (Llama 2 7B's 11008, 3 8B's 14336).
  spec.ffn_hidden = hf_int(config, {"intermediate_size", "n_inner", "ffn_dim"}, source,
                           spec.mlp == MlpKind::gelu ? std::optional<int64_t>(4 * spec.hidden) : std::nullopt);
  // Qwen (v1)'s intermediate_size is both gated branches together: w1 and w2 are each half of it
  // (QWenMLP in Qwen-7B's modeling_qwen.py; 7.72B parameters with 22016 / 2).
  if (hf_string(config, "model_type", "", source) == "qwen") spec.ffn_hidden /= 2;
}

// Gated families whose norms are LayerNorms (StableLM's, Cohere's); the other gated ones RMSNorm
// whatever their epsilon's key (Qwen v1's layer_norm_epsilon is its RMSNorm's).
constexpr std::array<std::string_view, 2> kGatedLayerNormFamilies = {"stablelm", "cohere"};

// Norms, positions, biases, the head's tying and dropout.
void read_kinds(const nlohmann::json& config, TransformerSpec& spec, const std::string& source) {
  const bool llama_like = spec.mlp == MlpKind::swiglu || config.contains("rms_norm_eps");
  const bool layer_norm = !llama_like || hf_family_in(config, kGatedLayerNormFamilies, source);
  spec.norm = layer_norm ? NormKind::layernorm : NormKind::rmsnorm;
  spec.positions = hf_positions(config, llama_like, source);
  read_learned_positions(config, spec, source);
  // Biases on every linear or none: Falcon's `bias` (FalconConfig's default off); a gated family's
  // attention_bias and mlp_bias (Llama's, both off by default) together; else the family's (GPT-2
  // and the like all). Biases on some linears only are an approximation (hf_architecture.h).
  const bool all_biased = hf_bool(config, "attention_bias", false, source) && hf_bool(config, "mlp_bias", false, source);
  spec.bias = llama_like ? all_biased : hf_bool(config, "bias", !hf_family_in(config, kFalconFamilies, source), source);
  const bool tied_by_default =
      (!llama_like && !hf_family_in(config, kUntiedFamilies, source)) || hf_family_in(config, kTiedFamilies, source);
  spec.tied_embeddings = hf_bool(config, "tie_word_embeddings", tied_by_default, source);
  spec.dropout = false;  // attention or hidden dropout under any of their families' names
  for (const char* key : {"attention_dropout", "attn_pdrop", "resid_pdrop", "hidden_dropout", "dropout"}) {
    spec.dropout = spec.dropout || hf_number(config, key, 0, source) > 0;
  }
}

}  // namespace

TransformerSpec transformer_spec_from_hf_config(const nlohmann::json& config, const std::string& source,
                                                const SpecOverrides& overrides) {
  if (!config.is_object()) throw InputError(source + ": expected a JSON object");
  refuse_other_than_a_decoder(config, source);
  refuse_other_blocks(config, source);
  refuse_mixture_of_experts(config, source);
  refuse_alibi_families(config, source);
  refuse_projected_embeddings(config, source);
  TransformerSpec spec;
  spec.name = hf_string(config, "_name_or_path", "", source);  // empty, as absent: the model type's
  if (spec.name.empty()) spec.name = hf_string(config, "model_type", "hf-model", source);
  spec.source = source;
  read_shape(config, overrides, spec, source);
  read_kinds(config, spec, source);
  // torch_dtype is how the checkpoint is stored (Llama 2's float16, OLMo's float32), not how the
  // model trains: bf16 mixed precision, which --precision changes.
  spec.precision = Precision::bf16;
  check_hf_heads(config, spec, source);
  read_hf_architecture(config, spec, source);
  return spec;
}

TransformerSpec transformer_spec_from_hf_text(const std::string& text, const std::string& source,
                                              const SpecOverrides& overrides) {
  const nlohmann::json config = parse_json_text(text, source);
  return transformer_spec_from_hf_config(config, source, overrides);
}

}  // namespace axo
