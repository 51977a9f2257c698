// A TransformerSpec from a Hugging Face config.json: the keys of the GPT-2, Llama, Mistral, Gemma,
// GPT-NeoX, Falcon, OPT and Qwen families, and clear refusals of what a TransformerSpec cannot hold
// (mixture of experts, ALiBi, encoder-decoder or encoder-only models, other head widths). The
// details beyond the shape, and those priced as their nearest, are hf_architecture.h's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "model/transformer_spec.h"

namespace axo {

// From a Hugging Face config.json (GPT-2, Llama, Mistral, Gemma, GPT-NeoX style keys).
// config.json has no batch size: global_batch is the override's, else 0 for the caller to set.
// The MLP is gated (swiglu) for the Llama and Gemma families (by model_type or
// architectures, whatever hidden_act says), else when the activation is SiLU.
// InputError for what a TransformerSpec cannot hold: an encoder-decoder, encoder or multimodal
// model, state-space or recurrent blocks, mixture of experts (num_local_experts, ...), ALiBi
// (BLOOM, MPT, `alibi`), OPT's projected embedding, a head_dim other than hidden/heads, and a
// sequence longer than a learned position table.
TransformerSpec transformer_spec_from_hf_config(const nlohmann::json& config, const std::string& source,
                                                const SpecOverrides& overrides = {});
// From the text of a config.json; malformed JSON is an InputError.
TransformerSpec transformer_spec_from_hf_text(const std::string& text, const std::string& source,
                                              const SpecOverrides& overrides = {});

}  // namespace axo
