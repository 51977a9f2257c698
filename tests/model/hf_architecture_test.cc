// A config.json's architecture beyond its shape: the details the exports state (rotary base,
// fraction and scaling, norm epsilon, q/k/v biases, sliding window) and those axo prices as their
// nearest (approximations, which the exports that state a model refuse).
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
            "c.json: field 'rope_theta': -1 is not from 1 to 1e+12");
}

// A gated MLP has no default width (4h is a plain MLP's): Llama without intermediate_size is refused.
TEST(HfArchitecture, AGatedMlpNeedsItsWidth) {
  nlohmann::json config = llama2_7b();
  config.erase("intermediate_size");
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(config, "c.json"); }),
            "c.json: field 'intermediate_size' or 'n_inner' or 'ffn_dim': missing from the config.json");
  // Every family's name for a missing field: GPT-2's config.json says n_embd.
  EXPECT_NE(testing::input_error_of([] {
              transformer_spec_from_hf_config({{"model_type", "gpt2"}, {"n_layer", 2}, {"n_head", 2}}, "g.json");
            }).find("field 'hidden_size' or 'n_embd' or 'd_model': missing"),
            std::string::npos);
}

// An activation transformers has no class of is no model it builds: refused, where it was priced as
// the family's own.
TEST(HfArchitecture, AnActivationIsOneTransformersHas) {
  nlohmann::json config = llama2_7b();
  config["hidden_act"] = "banana";
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(config, "c.json"); })
                .find("c.json: the MLP's activation (hidden_act, hidden_activation or activation_function) 'banana' "
                      "is none of transformers' activations (gelu, "),
            std::string::npos);
  config["hidden_act"] = "relu";  // a real one, priced as SwiGLU's: said
  EXPECT_EQ(transformer_spec_from_hf_config(config, "c.json").approximations,
            std::vector<std::string>{"a gated MLP of relu, priced as SwiGLU's"});
}

// What Megatron-LM has a flag for is a field of the spec; what it has none for is an approximation.
TEST(HfArchitecture, StatedDetailsAreFieldsAndTheRestApproximations) {
  nlohmann::json qwen2 = llama2_7b();
  qwen2["model_type"] = "qwen2";
  qwen2["rms_norm_eps"] = 1e-6;
  qwen2["rope_theta"] = 1000000.0;
  qwen2["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  const TransformerSpec qwen = transformer_spec_from_hf_config(qwen2, "q.json");
  EXPECT_TRUE(qwen.qkv_bias);
  EXPECT_FALSE(qwen.bias);
  EXPECT_EQ(qwen.parameter_count(), transformer_spec_from_hf_config(llama2_7b(), "c.json").parameter_count() +
                                        32 * 3 * 4096);  // q, k and v biases in each of 32 layers
  EXPECT_EQ(qwen.norm_epsilon, 1e-6);
  EXPECT_EQ(qwen.rope_theta, 1e6);
  EXPECT_EQ(qwen.approximations,
            (std::vector<std::string>{"rope scaling {\"factor\":4.0,\"rope_type\":\"yarn\"} (rope_scaling)"}));
  // Llama 3.1's rope scaling is Megatron-LM's --use-rope-scaling.
  nlohmann::json llama31 = llama2_7b();
  llama31["rope_scaling"] = {{"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                             {"original_max_position_embeddings", 8192}, {"rope_type", "llama3"}};
  const TransformerSpec three_one = transformer_spec_from_hf_config(llama31, "l.json");
  EXPECT_EQ(three_one.rope_scaling_factor, 8);
  EXPECT_TRUE(three_one.approximations.empty());
  // GPT-NeoX: transformers' defaults are 25% rotary and the parallel residual, and an LM head of its own.
  const nlohmann::json neox = {{"model_type", "gpt_neox"}, {"hidden_size", 512},  {"num_hidden_layers", 2},
                               {"num_attention_heads", 8},  {"vocab_size", 1000}, {"max_position_embeddings", 128}};
  const TransformerSpec pythia = transformer_spec_from_hf_config(neox, "n.json");
  EXPECT_FALSE(pythia.tied_embeddings);
  EXPECT_EQ(pythia.positions, PositionKind::rope);
  EXPECT_EQ(pythia.rotary_percent, 0.25);
  EXPECT_EQ(pythia.approximations, (std::vector<std::string>{"attention and MLP side by side from one input "
                                                             "(use_parallel_residual), priced one after the other"}));
  // GPT-J's rotary_dim; OPT's ReLU; Gemma's gated GELU, named by hidden_activation before hidden_act.
  const nlohmann::json gptj = {{"model_type", "gptj"}, {"n_embd", 512}, {"n_layer", 2}, {"n_head", 8},
                               {"rotary_dim", 16},     {"vocab_size", 1000}, {"n_positions", 128}};
  EXPECT_EQ(transformer_spec_from_hf_config(gptj, "j.json").rotary_percent, 0.25);
  const nlohmann::json opt = {{"model_type", "opt"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                              {"num_attention_heads", 8}, {"ffn_dim", 2048}, {"activation_function", "relu"},
                              {"vocab_size", 1000}, {"max_position_embeddings", 128}};
  EXPECT_EQ(transformer_spec_from_hf_config(opt, "o.json").approximations,
            (std::vector<std::string>{"an MLP of relu, priced as GELU's"}));
  nlohmann::json gemma = llama2_7b();
  gemma["model_type"] = "gemma";
  gemma["hidden_act"] = "gelu";
  gemma["hidden_activation"] = "gelu_pytorch_tanh";
  EXPECT_EQ(transformer_spec_from_hf_config(gemma, "g.json").approximations,
            (std::vector<std::string>{"a gated MLP of gelu_pytorch_tanh, priced as SwiGLU's"}));
  // A family known by its architecture alone.
  nlohmann::json by_architecture = qwen2;
  by_architecture.erase("model_type");
  by_architecture["architectures"] = {"Qwen2ForCausalLM"};
  EXPECT_TRUE(transformer_spec_from_hf_config(by_architecture, "q.json").qkv_bias);
}

// The sliding window is read as the model's (Qwen2's only with use_sliding_window, on the layers from
// max_window_layers on; MistralConfig has no such switch); plan refuses one shorter than the
// sequence (tests/tools/cli_test.cc), other commands read the model.
TEST(HfArchitecture, TheSlidingWindowIsRead) {
  nlohmann::json mistral = llama2_7b();
  mistral["model_type"] = "mistral";
  mistral["max_position_embeddings"] = 32768;
  mistral["sliding_window"] = 4096;
  EXPECT_EQ(transformer_spec_from_hf_config(mistral, "m.json").sliding_window, 4096);
  mistral["sliding_window"] = nullptr;  // v0.3
  EXPECT_EQ(transformer_spec_from_hf_config(mistral, "m.json").sliding_window, 0);
  mistral["sliding_window"] = 4096;
  mistral["use_sliding_window"] = false;
  EXPECT_EQ(transformer_spec_from_hf_config(mistral, "m.json").sliding_window, 4096);
  nlohmann::json qwen2 = mistral;
  qwen2["model_type"] = "qwen2";
  EXPECT_EQ(transformer_spec_from_hf_config(qwen2, "q.json").sliding_window, 0);
  qwen2["use_sliding_window"] = true;
  qwen2["max_window_layers"] = 32;  // every layer below it attends to all
  EXPECT_EQ(transformer_spec_from_hf_config(qwen2, "q.json").sliding_window, 0);
  qwen2["max_window_layers"] = 28;
  EXPECT_EQ(transformer_spec_from_hf_config(qwen2, "q.json").sliding_window, 4096);
}

// Each family's rotary fraction is the key its transformers class reads: GPT-NeoX's rotary_pct,
// GPT-J's and CodeGen's rotary_dim, the others' partial_rotary_factor (Phi's default 0.5,
// StableLM's 0.25); Llama reads none of them.
TEST(HfArchitecture, TheRotaryFractionIsTheFamilysKey) {
  const auto fraction = [](const nlohmann::json& config) {
    return transformer_spec_from_hf_config(config, "c.json").rotary_percent;
  };
  nlohmann::json llama = llama2_7b();
  llama["rotary_dim"] = 64, llama["rotary_pct"] = 0.5;
  EXPECT_EQ(fraction(llama), 1);
  const nlohmann::json base = {{"hidden_size", 512}, {"num_hidden_layers", 2}, {"num_attention_heads", 8},
                               {"vocab_size", 1000}, {"max_position_embeddings", 128}};
  nlohmann::json neox = base;
  neox["model_type"] = "gpt_neox", neox["rotary_pct"] = 0.5, neox["partial_rotary_factor"] = 0.25;
  EXPECT_EQ(fraction(neox), 0.5);
  nlohmann::json phi = base;
  phi["model_type"] = "phi", phi["rotary_dim"] = 16;
  EXPECT_EQ(fraction(phi), 0.5);
  phi["partial_rotary_factor"] = 0.4;
  EXPECT_EQ(fraction(phi), 0.4);
  nlohmann::json stablelm = base;
  stablelm["model_type"] = "stablelm", stablelm["intermediate_size"] = 1376, stablelm["hidden_act"] = "silu";
  stablelm["layer_norm_eps"] = 1e-5, stablelm["use_qkv_bias"] = true, stablelm["qk_layernorm"] = true;
  const TransformerSpec stable = transformer_spec_from_hf_config(stablelm, "s.json");
  EXPECT_EQ(stable.rotary_percent, 0.25);
  EXPECT_EQ(stable.norm, NormKind::layernorm);  // its layer_norm_eps, under a gated MLP
  EXPECT_TRUE(stable.qkv_bias);
  EXPECT_FALSE(stable.qk_norm);  // a LayerNorm for each head: no Megatron flag
  EXPECT_EQ(stable.approximations,
            (std::vector<std::string>{"a LayerNorm of each head's q and k (qk_layernorm), priced without them"}));
  nlohmann::json codegen = base;
  codegen["model_type"] = "codegen", codegen["rotary_dim"] = 32;
  const TransformerSpec code = transformer_spec_from_hf_config(codegen, "g.json");
  EXPECT_EQ(code.rotary_percent, 0.5);
  EXPECT_FALSE(code.tied_embeddings);
  ASSERT_EQ(code.approximations.size(), 1u);
  EXPECT_EQ(code.approximations[0], "attention and MLP side by side from one input (model_type codegen), priced one "
                                    "after the other");
}

// q/k norms per head are Megatron's --qk-layernorm (Qwen3); rope scaling of none ({}, default) is
// none, and a malformed one is refused; GPT-NeoX without attention biases is an approximation.
TEST(HfArchitecture, NormsScalingAndBiasesAsTheFamiliesHaveThem) {
  nlohmann::json qwen3 = llama2_7b();
  qwen3["model_type"] = "qwen3";
  const TransformerSpec q = transformer_spec_from_hf_config(qwen3, "q.json");
  EXPECT_TRUE(q.qk_norm);
  EXPECT_FALSE(q.qkv_bias);
  EXPECT_EQ(q.parameter_count(), transformer_spec_from_hf_config(llama2_7b(), "c.json").parameter_count() +
                                     32 * 2 * 128);  // q_norm and k_norm of head_dim weights in each layer
  nlohmann::json llama = llama2_7b();
  for (const nlohmann::json& none : {nlohmann::json::object(), nlohmann::json{{"rope_type", "default"}}}) {
    llama["rope_scaling"] = none;
    EXPECT_TRUE(transformer_spec_from_hf_config(llama, "c.json").approximations.empty()) << none.dump();
  }
  llama["rope_scaling"] = "llama3";
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(llama, "c.json"); }),
            "c.json: field 'rope_scaling': expected an object or null");
  llama["rope_scaling"] = {{"rope_type", "llama3"}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(llama, "c.json"); }),
            "c.json: field 'rope_scaling': llama3 scaling without its factor");
  const nlohmann::json neox = {{"model_type", "gpt_neox"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                               {"num_attention_heads", 8}, {"vocab_size", 1000}, {"max_position_embeddings", 128},
                               {"use_parallel_residual", false}, {"attention_bias", false}};
  EXPECT_EQ(transformer_spec_from_hf_config(neox, "n.json").approximations,
            (std::vector<std::string>{"no biases on the attention's linears (attention_bias: false), priced with "
                                      "them"}));
}

// Families read as their transformers classes build them: Qwen v1's layer_norm_epsilon is its
// RMSNorm's; OLMo's LayerNorms have no weights, OLMo's clip_qkv clamps; Falcon's bias and table
// default to off and 2048, new_decoder_architecture is a parallel block; GPT-J's rotary_dim null
// rotates every channel, CodeGen's defaults to 64; OPT's dropout and GPT-2's resid_pdrop count.
TEST(HfArchitecture, FamiliesAsTheirClassesBuildThem) {
  nlohmann::json qwen = llama2_7b();
  qwen["model_type"] = "qwen", qwen["layer_norm_epsilon"] = 1e-6;
  qwen.erase("rms_norm_eps");
  EXPECT_EQ(transformer_spec_from_hf_config(qwen, "q.json").norm, NormKind::rmsnorm);
  nlohmann::json olmo = llama2_7b();
  olmo["model_type"] = "olmo", olmo["clip_qkv"] = 8.0;
  EXPECT_EQ(transformer_spec_from_hf_config(olmo, "o.json").approximations,
            (std::vector<std::string>{"LayerNorms without weights or biases (model_type olmo), priced as RMSNorms",
                                      "q, k and v clamped to +-8.0 (clip_qkv), priced without it"}));
  const nlohmann::json falcon = {{"model_type", "falcon"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                                 {"num_attention_heads", 8}, {"vocab_size", 1000}, {"new_decoder_architecture", true},
                                 {"parallel_attn", false}, {"num_kv_heads", 2}};
  const TransformerSpec f = transformer_spec_from_hf_config(falcon, "f.json");
  EXPECT_FALSE(f.bias);
  EXPECT_EQ(f.seq_len, 2048);
  EXPECT_EQ(f.approximations, (std::vector<std::string>{"attention and MLP side by side from one input "
                                                        "(new_decoder_architecture), priced one after the other"}));
  const nlohmann::json base = {{"n_embd", 512}, {"n_layer", 2}, {"n_head", 4}, {"vocab_size", 1000},
                               {"n_positions", 128}};  // heads of 128 channels
  nlohmann::json gptj = base, codegen = base;
  gptj["model_type"] = "gptj", gptj["rotary_dim"] = nullptr;
  codegen["model_type"] = "codegen";
  EXPECT_EQ(transformer_spec_from_hf_config(gptj, "j.json").rotary_percent, 1);
  EXPECT_EQ(transformer_spec_from_hf_config(codegen, "c.json").rotary_percent, 0.5);
  nlohmann::json opt = base;
  opt["model_type"] = "opt", opt["dropout"] = 0.1;
  EXPECT_TRUE(transformer_spec_from_hf_config(opt, "o.json").dropout);
  nlohmann::json gpt2 = base;
  gpt2["model_type"] = "gpt2", gpt2["resid_pdrop"] = 0.1;
  EXPECT_TRUE(transformer_spec_from_hf_config(gpt2, "g.json").dropout);
}

// transformers v5 keeps the rotary base and scaling in rope_parameters; Qwen3's window counts from
// max_window_layers' default of 28 on.
TEST(HfArchitecture, RopeParametersAndQwenThreesWindow) {
  nlohmann::json v5 = llama2_7b();
  v5.erase("rope_theta");
  v5.erase("rope_scaling");
  v5["rope_parameters"] = {{"rope_theta", 500000.0}, {"rope_type", "llama3"}, {"factor", 8.0},
                           {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                           {"original_max_position_embeddings", 8192}};
  const TransformerSpec spec = transformer_spec_from_hf_config(v5, "c.json");
  EXPECT_EQ(spec.rope_theta, 500000);
  EXPECT_EQ(spec.rope_scaling_factor, 8);
  EXPECT_TRUE(spec.approximations.empty());
  v5["rope_parameters"] = {{"full_attention", {{"rope_theta", 1e6}}}, {"sliding_attention", {{"rope_theta", 1e4}}}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(v5, "c.json"); }),
            "c.json: field 'rope_parameters': one per layer type ('full_attention'), which axo does not read");
  nlohmann::json qwen3 = llama2_7b();
  qwen3["model_type"] = "qwen3", qwen3["sliding_window"] = 4096, qwen3["use_sliding_window"] = true;
  EXPECT_EQ(transformer_spec_from_hf_config(qwen3, "q.json").sliding_window, 4096);  // 32 layers, from 28 on
  qwen3["num_hidden_layers"] = 28;
  EXPECT_EQ(transformer_spec_from_hf_config(qwen3, "q.json").sliding_window, 0);
}

// A learned position table keeps its rows at a shorter --seq (GPT-2's 1024 at 512): its parameters
// and the exports' --max-position-embeddings.
TEST(HfArchitecture, TheLearnedPositionTableKeepsItsRows) {
  const nlohmann::json gpt2 = {{"model_type", "gpt2"}, {"n_layer", 12}, {"n_embd", 768}, {"n_head", 12},
                               {"n_positions", 1024}, {"vocab_size", 50257}};
  const TransformerSpec short_seq = transformer_spec_from_hf_config(gpt2, "g.json", {0, 512});
  EXPECT_EQ(short_seq.seq_len, 512);
  EXPECT_EQ(short_seq.position_rows(), 1024);
  EXPECT_EQ(short_seq.parameter_count(), 124439808);
}

// A key given twice in one object would be read as the last: refused (nested objects apart).
TEST(HfArchitecture, AKeyGivenTwiceIsRefused) {
  EXPECT_EQ(testing::input_error_of([] { parse_json_text(R"({"hidden_size": 4096, "hidden_size": 8192})", "c.json"); }),
            "c.json: field 'hidden_size': given twice in one object (JSON would keep the last and drop the other)");
  EXPECT_EQ(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}})", "c.json")["b"]["x"], 2);
}

}  // namespace
}  // namespace axo
