// What a Hugging Face config.json says of a model's architecture beyond the
// shape a TransformerSpec holds (hf_config.h reads the shape): the rotary
// base, the details axo prices as the nearest it models (which the exports
// that state an architecture cannot state: TransformerSpec::approximations),
// and a sliding attention window, which it would price wrong (refused).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "model/transformer_spec.h"

namespace axo {

// rope_theta (rotary_emb_base for GPT-NeoX), else RoFormer's 10000.
double hf_rope_theta(const nlohmann::json& config, const std::string& source);

// The details of `config` that `spec` (read from it, biases included) prices as their nearest:
// biases on some linears only (Qwen2's q/k/v, Llama's attention_bias or mlp_bias alone), q and k
// normalized per head (Qwen3, Gemma 3, OLMo 2), rotary positions on part of each head (rotary_pct,
// partial_rotary_factor, rotary_dim), attention and MLP side by side (GPT-NeoX, GPT-J, Phi, Falcon,
// Cohere), an activation other than the MLP kind's (Gemma's gated GELU, OPT's ReLU), rope scaling
// and a norm epsilon other than 1e-5. Each names its field and value.
std::vector<std::string> hf_approximations(const nlohmann::json& config, const TransformerSpec& spec,
                                           const std::string& source);

// InputError where attention looks back over a window shorter than the sequence (Mistral 7B v0.1's
// sliding_window 4096; Qwen2's only with use_sliding_window): axo prices full causal attention.
void refuse_sliding_window(const nlohmann::json& config, const TransformerSpec& spec, const std::string& source);

}  // namespace axo
