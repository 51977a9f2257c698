// What a Hugging Face config.json says of a model's architecture beyond the
// shape a TransformerSpec holds (hf_config.h reads the shape): the details the
// exports state (rotary base, fraction and scaling, norm epsilon, q/k/v-only
// biases, the sliding window) and those axo prices as the nearest it models,
// which no export states (TransformerSpec::approximations).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "model/transformer_spec.h"

namespace axo {

// Sets `spec`'s rope_theta (rope_theta, GPT-NeoX's rotary_emb_base, transformers v5's
// rope_parameters), rotary_percent (by the key the family reads: rotary_pct, rotary_dim or
// partial_rotary_factor), rope_scaling_factor (Llama 3.1's rope_type llama3 with its low 1, high 4
// and 8192 original positions, as Megatron-LM's --use-rope-scaling applies it), norm_epsilon,
// qkv_bias (Qwen's, StableLM's use_qkv_bias), qk_norm (Qwen3's and Gemma 3's per-head RMSNorms)
// and sliding_window (Qwen2's and Qwen3's only with use_sliding_window), and lists as
// approximations: biases on some linears only, other q/k norms (OLMo 2's, StableLM's
// qk_layernorm), OLMo's weightless LayerNorms, clip_qkv, attention and MLP side by side (GPT-NeoX,
// GPT-J, CodeGen, Phi, Falcon, Cohere), an activation other than the MLP kind's (Gemma's gated
// GELU, OPT's ReLU) and other rope scaling. Each names its field.
// `spec` holds the shape, positions, MLP kind and `bias` already.
void read_hf_architecture(const nlohmann::json& config, TransformerSpec& spec, const std::string& source);

// The activation a config names: hidden_activation (Gemma's), hidden_act or activation_function,
// the first given; `fallback` where none is.
std::string hf_activation(const nlohmann::json& config, const std::string& fallback, const std::string& source);

}  // namespace axo
