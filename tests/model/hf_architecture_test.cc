// A config.json's architecture beyond its shape: the rotary base, the details axo prices as their
// nearest (approximations, which the exports that state a model refuse) and the sliding window.
#include "model/hf_architecture.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/hf_config.h"
#include "model/json_text.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

// Llama 2 7B's config.json (meta-llama/Llama-2-7b-hf): nothing priced as a nearest kind.
nlohmann::json llama2_7b() {
  return {{"model_type", "llama"},        {"hidden_size", 4096},      {"num_hidden_layers", 32},
          {"num_attention_heads", 32},    {"num_key_value_heads", 32}, {"intermediate_size", 11008},
          {"hidden_act", "silu"},         {"max_position_embeddings", 4096}, {"vocab_size", 32000},
          {"rms_norm_eps", 1e-5},         {"rope_theta", 10000.0},     {"rope_scaling", nullptr},
          {"attention_bias", false},      {"tie_word_embeddings", false}};
}

TEST(HfArchitecture, LlamaTwoIsExactAndLlamaThreeKeepsItsRotaryBase) {
  const TransformerSpec two = transformer_spec_from_hf_config(llama2_7b(), "c.json");
  EXPECT_TRUE(two.approximations.empty());
  EXPECT_EQ(two.rope_theta, kDefaultRopeTheta);
  EXPECT_EQ(two.parameter_count(), 6738415616);
  nlohmann::json three = llama2_7b();
  three["rope_theta"] = 500000.0;
  EXPECT_EQ(transformer_spec_from_hf_config(three, "c.json").rope_theta, 500000);
  three["rope_theta"] = -1;
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(three, "c.json"); }),
            "c.json: field 'rope_theta': -1 is not a rotary base from 1 to 1e12");
}

// A gated MLP has no default width (4h is a plain MLP's): Llama without intermediate_size is refused.
TEST(HfArchitecture, AGatedMlpNeedsItsWidth) {
  nlohmann::json config = llama2_7b();
  config.erase("intermediate_size");
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(config, "c.json"); }),
            "c.json: field 'intermediate_size': missing from the config.json");
}

TEST(HfArchitecture, DetailsPricedAsTheirNearestAreListed) {
  nlohmann::json qwen2 = llama2_7b();
  qwen2["model_type"] = "qwen2";
  qwen2["rms_norm_eps"] = 1e-6;
  qwen2["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  EXPECT_EQ(transformer_spec_from_hf_config(qwen2, "q.json").approximations,
            (std::vector<std::string>{"q/k/v biases without the other linears' (model_type qwen2), priced without them",
                                      "rope scaling {\"factor\":4.0,\"rope_type\":\"yarn\"} (rope_scaling)",
                                      "a norm epsilon of 1e-06 (rms_norm_eps)"}));
  // GPT-NeoX: transformers' defaults are 25% rotary and the parallel residual, and an LM head of its own.
  const nlohmann::json neox = {{"model_type", "gpt_neox"}, {"hidden_size", 512},  {"num_hidden_layers", 2},
                               {"num_attention_heads", 8},  {"vocab_size", 1000}, {"max_position_embeddings", 128}};
  const TransformerSpec pythia = transformer_spec_from_hf_config(neox, "n.json");
  EXPECT_FALSE(pythia.tied_embeddings);
  EXPECT_EQ(pythia.approximations,
            (std::vector<std::string>{"rotary positions on 25% of each head's channels (rotary_pct: 0.25)",
                                      "attention and MLP side by side from one input (use_parallel_residual), "
                                      "priced one after the other"}));
  // GPT-J's rotary_dim; OPT's ReLU; Gemma's gated GELU.
  const nlohmann::json gptj = {{"model_type", "gptj"}, {"n_embd", 512}, {"n_layer", 2}, {"n_head", 8},
                               {"rotary_dim", 16},     {"vocab_size", 1000}, {"n_positions", 128}};
  EXPECT_EQ(transformer_spec_from_hf_config(gptj, "j.json").approximations,
            (std::vector<std::string>{"rotary positions on 16 of each head's 64 channels (rotary_dim)",
                                      "attention and MLP side by side from one input (model_type gptj), "
                                      "priced one after the other"}));
  const nlohmann::json opt = {{"model_type", "opt"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                              {"num_attention_heads", 8}, {"ffn_dim", 2048}, {"activation_function", "relu"},
                              {"vocab_size", 1000}, {"max_position_embeddings", 128}};
  EXPECT_EQ(transformer_spec_from_hf_config(opt, "o.json").approximations,
            (std::vector<std::string>{"an MLP of relu (activation_function), priced as GELU's"}));
  nlohmann::json gemma = llama2_7b();
  gemma["model_type"] = "gemma";
  gemma["hidden_act"] = "gelu_pytorch_tanh";
  EXPECT_EQ(transformer_spec_from_hf_config(gemma, "g.json").approximations,
            (std::vector<std::string>{"a gated MLP of gelu_pytorch_tanh (hidden_act), priced as SwiGLU's"}));
}

// Mistral 7B v0.1 attends over the last 4096 tokens: refused at its 32768-token default, planned at
// 4096 or less; Qwen2's window counts only with use_sliding_window.
TEST(HfArchitecture, ASlidingWindowShorterThanTheSequenceIsRefused) {
  nlohmann::json mistral = llama2_7b();
  mistral["model_type"] = "mistral";
  mistral["max_position_embeddings"] = 32768;
  mistral["sliding_window"] = 4096;
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(mistral, "m.json"); }),
            "m.json: field 'sliding_window': attention over the last 4096 tokens, fewer than the sequence of 32768: "
            "axo prices full causal attention (plan with --seq 4096 or less, where the window holds the whole "
            "sequence)");
  EXPECT_EQ(transformer_spec_from_hf_config(mistral, "m.json", {0, 4096}).seq_len, 4096);
  mistral["sliding_window"] = nullptr;  // v0.3
  EXPECT_EQ(transformer_spec_from_hf_config(mistral, "m.json").seq_len, 32768);
  nlohmann::json qwen2 = mistral;
  qwen2["sliding_window"] = 4096;
  qwen2["use_sliding_window"] = false;
  EXPECT_EQ(transformer_spec_from_hf_config(qwen2, "q.json").seq_len, 32768);
}

// A key given twice in one object would be read as the last: refused (nested objects apart).
TEST(HfArchitecture, AKeyGivenTwiceIsRefused) {
  EXPECT_EQ(testing::input_error_of([] { parse_json_text(R"({"hidden_size": 4096, "hidden_size": 8192})", "c.json"); }),
            "c.json: field 'hidden_size': given twice in one object (JSON would keep the last and drop the other)");
  EXPECT_EQ(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}})", "c.json")["b"]["x"], 2);
}

}  // namespace
}  // namespace axo
