// Model specs: parameter and FLOP formulas, YAML and Hugging Face input.
#include "model/transformer_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "model/error.h"
#include "tests/input_error_of.h"
#include "model/presets.h"
#include "model/yaml_fields.h"

namespace axo {
namespace {

// Narayanan et al. SC'21: P = 12·l·h²·(1 + 13/(12h) + (V+s)/(12·l·h)).
double narayanan_params(double l, double h, double V, double s) {
  return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
}

TEST(TransformerSpec, Gpt3ParametersMatchTheFormula) {
  const TransformerSpec spec = load_model("gpt3-175b");
  const double expected = narayanan_params(96, 12288, 50257, 2048);
  // The formula leaves out the final LayerNorm (2h parameters).
  EXPECT_NEAR(double(spec.parameter_count()), expected, 2.0 * 12288 + 1);
  EXPECT_NEAR(double(spec.parameter_count()) / 1e9, 174.6, 0.05);
}

TEST(TransformerSpec, ModelFlopsMatchNarayanan) {
  TransformerSpec spec = load_model("megatron-1t");
  const double B = double(spec.global_batch), s = 2048, l = 128, h = 25600, V = 51200;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(spec.model_flops_per_iteration() / expected, 1.0, 1e-12);
}

TEST(TransformerSpec, LlamaShapes) {
  const TransformerSpec spec = load_model("llama2-70b");
  EXPECT_EQ(spec.qkv_width(), (64 + 2 * 8) * 128);
  EXPECT_EQ(spec.mlp_up_width(), 2 * 28672);
  EXPECT_NEAR(double(spec.parameter_count()) / 1e9, 68.98, 0.01);
  EXPECT_NEAR(double(load_model("llama3-405b").parameter_count()) / 1e9, 405.85, 0.01);
}

TEST(TransformerSpec, HuggingFaceConfig) {
  const nlohmann::json config = {{"model_type", "llama"},     {"hidden_size", 4096},
                                 {"num_hidden_layers", 32},   {"num_attention_heads", 32},
                                 {"num_key_value_heads", 8},  {"intermediate_size", 14336},
                                 {"hidden_act", "silu"},      {"max_position_embeddings", 8192},
                                 {"vocab_size", 128256},      {"rms_norm_eps", 1e-5},
                                 {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"}};
  const TransformerSpec spec = transformer_spec_from_hf_config(config, "config.json");
  EXPECT_EQ(spec.parameter_count(), load_model("llama3-8b").parameter_count());
  EXPECT_EQ(spec.global_batch, 0);
  EXPECT_EQ(spec.mlp, MlpKind::swiglu);
  const nlohmann::json gpt2 = {{"n_layer", 12}, {"n_embd", 768}, {"n_head", 12},
                               {"n_positions", 1024}, {"vocab_size", 50257}};
  EXPECT_EQ(transformer_spec_from_hf_config(gpt2, "c.json").parameter_count(),
            load_model("gpt2-124m").parameter_count());
}

// Falcon's config: key/value heads as num_kv_heads (40B) or multi_query (7B: one), `bias`
// for every linear, rotary positions; ALiBi (BLOOM's, Falcon's alibi) is refused. Falcon-7B has
// 6.92B parameters (tiiuae's model card); 40B's weights by hand: 60 layers of QKV h·(h + 2·8·64),
// the output h·h and the 4h MLP 2·h·4h, and the tied embedding.
TEST(TransformerSpec, HuggingFaceFalconHeadsBiasAndPositions) {
  nlohmann::json falcon_7b = {{"model_type", "falcon"}, {"hidden_size", 4544}, {"num_hidden_layers", 32},
                              {"num_attention_heads", 71}, {"multi_query", true}, {"bias", false},
                              {"alibi", false}, {"vocab_size", 65024}, {"max_position_embeddings", 2048},
                              {"parallel_attn", true}};
  const TransformerSpec seven = transformer_spec_from_hf_config(falcon_7b, "f7.json");
  EXPECT_EQ(seven.kv_heads, 1);
  EXPECT_FALSE(seven.bias);
  EXPECT_EQ(seven.positions, PositionKind::rope);
  EXPECT_NEAR(double(seven.parameter_count()) / 1e9, 6.92, 0.03);
  const nlohmann::json falcon_40b = {{"model_type", "falcon"}, {"hidden_size", 8192}, {"num_hidden_layers", 60},
                                     {"num_attention_heads", 128}, {"num_kv_heads", 8}, {"bias", false},
                                     {"new_decoder_architecture", true}, {"vocab_size", 65024},
                                     {"max_position_embeddings", 2048}};
  const TransformerSpec forty = transformer_spec_from_hf_config(falcon_40b, "f40.json");
  EXPECT_EQ(forty.kv_heads, 8);
  const double h = 8192, by_hand = 60 * (h * (h + 2 * 8 * 64) + h * h + 2 * h * 4 * h) + 65024 * h;
  EXPECT_NEAR(double(forty.parameter_count()), by_hand, 1e-4 * by_hand);  // norms aside
  falcon_7b["alibi"] = true;
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(falcon_7b, "f7.json"); }),
            "f7.json: field 'alibi': ALiBi attention biases; axo prices learned or rotary positions");
  // A Llama config with attention_bias keeps its biases; GPT-NeoX's rotary_pct is rotary.
  nlohmann::json llama = {{"model_type", "llama"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                          {"num_attention_heads", 8}, {"vocab_size", 1000}, {"max_position_embeddings", 128},
                          {"attention_bias", true}};
  EXPECT_TRUE(transformer_spec_from_hf_config(llama, "l.json").bias);
  const nlohmann::json neox = {{"model_type", "gpt_neox"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                               {"num_attention_heads", 8}, {"vocab_size", 1000}, {"max_position_embeddings", 128},
                               {"rotary_pct", 0.25}};
  EXPECT_EQ(transformer_spec_from_hf_config(neox, "n.json").positions, PositionKind::rope);
  llama["num_key_value_heads"] = 3;
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(llama, "l.json"); }),
            "l.json: the key/value heads (3) do not divide num_attention_heads 8");
}

// Gemma-2B's config.json (hidden_act gelu, head_dim 256 = 2048 / 8, no tie_word_embeddings key):
// a gated MLP (gate_proj, up_proj, down_proj) with tied embeddings, 2.51B parameters.
nlohmann::json gemma_2b_config() {
  return {{"architectures", {"GemmaForCausalLM"}}, {"model_type", "gemma"},   {"hidden_size", 2048},
          {"num_hidden_layers", 18},  {"num_attention_heads", 8}, {"num_key_value_heads", 1},
          {"head_dim", 256},          {"intermediate_size", 16384}, {"hidden_act", "gelu"},
          {"hidden_activation", "gelu_pytorch_tanh"}, {"max_position_embeddings", 8192},
          {"vocab_size", 256000},     {"rms_norm_eps", 1e-6},     {"torch_dtype", "bfloat16"}};
}

TEST(TransformerSpec, HuggingFaceGemmaIsGatedAndTied) {
  const TransformerSpec spec = transformer_spec_from_hf_config(gemma_2b_config(), "gemma.json");
  EXPECT_EQ(spec.mlp, MlpKind::swiglu);
  EXPECT_TRUE(spec.tied_embeddings);
  EXPECT_EQ(spec.norm, NormKind::rmsnorm);
  EXPECT_FALSE(spec.bias);
  // 18 · (2048·(2048 + 2·256) + 2048·2048 + 3·2048·16384 + 2·2048) + 256000·2048 + 2048.
  EXPECT_EQ(spec.parameter_count(), 2506172416);
  // By the architecture alone, without model_type.
  nlohmann::json by_architecture = gemma_2b_config();
  by_architecture.erase("model_type");
  EXPECT_EQ(transformer_spec_from_hf_config(by_architecture, "gemma.json").mlp, MlpKind::swiglu);
  // Cohere's config ties too when it does not say (CohereConfig's default); Llama's does not.
  nlohmann::json cohere = gemma_2b_config();
  cohere["model_type"] = "cohere", cohere.erase("head_dim");
  EXPECT_TRUE(transformer_spec_from_hf_config(cohere, "cohere.json").tied_embeddings);
  cohere["model_type"] = "llama";
  EXPECT_FALSE(transformer_spec_from_hf_config(cohere, "llama.json").tied_embeddings);
}

TEST(TransformerSpec, HuggingFaceLlamaWithGeluIsStillGated) {
  const nlohmann::json config = {{"model_type", "llama"},     {"hidden_size", 4096},
                                 {"num_hidden_layers", 32},   {"num_attention_heads", 32},
                                 {"num_key_value_heads", 8},  {"intermediate_size", 14336},
                                 {"hidden_act", "gelu"},      {"max_position_embeddings", 8192},
                                 {"vocab_size", 128256},      {"rms_norm_eps", 1e-5}};
  const TransformerSpec spec = transformer_spec_from_hf_config(config, "config.json");
  EXPECT_EQ(spec.mlp, MlpKind::swiglu);
  EXPECT_FALSE(spec.tied_embeddings);  // Llama's default
  EXPECT_EQ(spec.parameter_count(), load_model("llama3-8b").parameter_count());
  // GPT-2's GELU MLP stays plain.
  const nlohmann::json gpt2 = {{"model_type", "gpt2"}, {"n_layer", 12}, {"n_embd", 768}, {"n_head", 12},
                               {"n_positions", 1024}, {"vocab_size", 50257}, {"activation_function", "gelu_new"}};
  EXPECT_EQ(transformer_spec_from_hf_config(gpt2, "c.json").mlp, MlpKind::gelu);
}

// Gemma-7B: head_dim 256 with hidden 3072 and 16 heads (192 each) is refused, not mis-sized.
TEST(TransformerSpec, HuggingFaceHeadDimOtherThanHiddenOverHeadsIsRefused) {
  nlohmann::json gemma_7b = gemma_2b_config();
  gemma_7b["hidden_size"] = 3072, gemma_7b["num_hidden_layers"] = 28, gemma_7b["num_attention_heads"] = 16;
  gemma_7b["num_key_value_heads"] = 16, gemma_7b["intermediate_size"] = 24576;
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(gemma_7b, "gemma-7b.json"); }),
            "gemma-7b.json: field 'head_dim': 256 is not hidden_size / num_attention_heads = 3072 / 16: axo's "
            "model has heads of hidden/heads channels (attention 3072 wide, not 16 x 256 = 4096) and cannot "
            "size this one");
  gemma_7b["head_dim"] = 192;  // the width axo would use: accepted
  EXPECT_EQ(transformer_spec_from_hf_config(gemma_7b, "gemma-7b.json").head_dim(), 192);
}

TEST(TransformerSpec, HuggingFaceMixtureOfExpertsIsRefused) {
  const nlohmann::json mixtral = {{"model_type", "mixtral"}, {"hidden_size", 4096},
                                  {"num_hidden_layers", 32}, {"num_attention_heads", 32},
                                  {"num_key_value_heads", 8}, {"intermediate_size", 14336},
                                  {"hidden_act", "silu"},    {"max_position_embeddings", 32768},
                                  {"vocab_size", 32000},     {"num_local_experts", 8},
                                  {"num_experts_per_tok", 2}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(mixtral, "mixtral.json"); }),
            "mixtral.json: field 'num_local_experts': 8: a mixture-of-experts model; axo plans dense "
            "transformers only");
  nlohmann::json routed_only = mixtral;
  routed_only.erase("num_local_experts");
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(routed_only, "m.json"); }).find("'num_experts_per_tok'"),
            std::string::npos);
  // One expert per token of one expert is a dense model.
  nlohmann::json single = mixtral;
  single["num_local_experts"] = 1, single["num_experts_per_tok"] = 1;
  EXPECT_EQ(transformer_spec_from_hf_config(single, "single.json").layers, mixtral["num_hidden_layers"].get<int64_t>());
}

TEST(TransformerSpec, BadInputsNameTheField) {
  try {
    transformer_spec_from_yaml(load_yaml_text("name: x\nlayers: 2\nhidden: 100\nheads: 3\n"
                                              "seq_len: 8\nvocab: 10\nglobal_batch: 1\n",
                                              "bad.yaml"),
                               "bad.yaml");
    FAIL() << "accepted heads that do not divide hidden";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.yaml:4:8: field 'heads': 3 heads do not divide hidden 100"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(transformer_spec_from_hf_config(nlohmann::json{{"n_layer", -1}}, "c.json"), InputError);
}

// The four precisions by name; fp8 stores bf16 tensors (2 bytes) and survives YAML.
TEST(TransformerSpec, PrecisionsByName) {
  for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8}) {
    EXPECT_EQ(parse_precision(to_string(p), "test"), p);
  }
  EXPECT_EQ(bytes_per_element(Precision::fp8), 2);
  EXPECT_EQ(bytes_per_element(Precision::fp32), 4);
  try {
    parse_precision("int8", "--precision");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--precision: precision 'int8': expected fp32, fp16, bf16 or fp8");
  }
  TransformerSpec spec = load_model("llama3-8b");
  spec.precision = Precision::fp8;
  EXPECT_EQ(transformer_spec_from_yaml(to_yaml(spec), "round-trip").precision, Precision::fp8);
}

TEST(TransformerSpec, YamlRoundTrip) {
  const TransformerSpec spec = load_model("llama3-70b");
  const TransformerSpec back = transformer_spec_from_yaml(to_yaml(spec), "round-trip");
  EXPECT_EQ(back.parameter_count(), spec.parameter_count());
  EXPECT_EQ(back.kv_heads, spec.kv_heads);
  EXPECT_EQ(back.seq_len, spec.seq_len);
  EXPECT_EQ(back.tied_embeddings, spec.tied_embeddings);
}

// More layers than any published model is refused (the search would take minutes to hours), from
// YAML with its line and from a config.json.
TEST(TransformerSpec, AnEmptyNameIsRefused) {
  TransformerSpec spec = load_model("gpt2-tiny");
  spec.name = "";
  EXPECT_NE(testing::input_error_of([&] { validate(spec, "m.yaml"); }).find("m.yaml: field 'name': must not be empty"), std::string::npos);
  // A config.json's empty _name_or_path is as absent: the model type names it.
  const nlohmann::json config = {{"model_type", "gpt2"}, {"_name_or_path", ""}, {"n_layer", 2}, {"n_embd", 64},
                                 {"n_head", 4}, {"n_positions", 8}, {"vocab_size", 10}};
  EXPECT_EQ(transformer_spec_from_hf_config(config, "c.json").name, "gpt2");
}

TEST(TransformerSpec, LayerCountIsBounded) {
  const std::string shape = "name: x\nhidden: 64\nheads: 4\nvocab: 10\nseq_len: 8\nglobal_batch: 1\n";
  EXPECT_NO_THROW(transformer_spec_from_yaml(load_yaml_text(shape + "layers: 1000\n", "a.yaml"), "a.yaml"));
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_yaml(load_yaml_text(shape + "layers: 1001\n", "b.yaml"), "b.yaml"); })
                .find("b.yaml:7"),
            std::string::npos);
  const nlohmann::json deep = {{"n_layer", 100000}, {"n_embd", 64}, {"n_head", 4}, {"n_positions", 8}, {"vocab_size", 10}};
  TransformerSpec spec = transformer_spec_from_hf_config(deep, "c.json");
  spec.global_batch = 1;
  EXPECT_NE(testing::input_error_of([&] { validate(spec, "c.json"); }).find("100000 is more than 1000"), std::string::npos);
}

// --batch and --seq (SpecOverrides) win over the file's values and supply the ones it leaves out;
// without an override a missing global_batch or sequence is still an error naming the field.
TEST(TransformerSpec, OverridesSupplyWhatTheFileLeavesOut) {
  const std::string shape = "name: x\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 10\n";
  const YAML::Node no_batch = load_yaml_text(shape + "seq_len: 8\n", "nb.yaml");
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_yaml(no_batch, "nb.yaml"); }).find("field 'global_batch'"),
            std::string::npos);
  EXPECT_EQ(transformer_spec_from_yaml(no_batch, "nb.yaml", {64, 0}).global_batch, 64);
  const YAML::Node both = load_yaml_text(shape + "seq_len: 8\nglobal_batch: 4\n", "b.yaml");
  const TransformerSpec overridden = transformer_spec_from_yaml(both, "b.yaml", {64, 32});
  EXPECT_EQ(overridden.global_batch, 64);
  EXPECT_EQ(overridden.seq_len, 32);
  // A value the file gives is checked even when overridden.
  const YAML::Node bad = load_yaml_text(shape + "seq_len: -1\nglobal_batch: 4\n", "bad.yaml");
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_yaml(bad, "bad.yaml", {0, 32}); }).find("bad.yaml:6"),
            std::string::npos);

  nlohmann::json config = {{"model_type", "llama"}, {"num_hidden_layers", 2}, {"hidden_size", 64},
                           {"num_attention_heads", 4}, {"intermediate_size", 128}, {"vocab_size", 10}};
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(config, "c.json"); }).find("'max_position_embeddings'"),
            std::string::npos);
  const TransformerSpec hf = transformer_spec_from_hf_config(config, "c.json", {16, 512});
  EXPECT_EQ(hf.seq_len, 512);
  EXPECT_EQ(hf.global_batch, 16);
  config["max_position_embeddings"] = 4096;
  EXPECT_EQ(transformer_spec_from_hf_config(config, "c.json", {0, 512}).seq_len, 512);
  EXPECT_EQ(transformer_spec_from_hf_config(config, "c.json").global_batch, 0);  // for the caller to set
  // missing_seq_len stands in only where the file has no sequence (train's --seq: positions stay).
  EXPECT_EQ(transformer_spec_from_hf_config(config, "c.json", {.missing_seq_len = 64}).seq_len, 4096);
  config.erase("max_position_embeddings");
  EXPECT_EQ(transformer_spec_from_hf_config(config, "c.json", {.missing_seq_len = 64}).seq_len, 64);
  EXPECT_EQ(transformer_spec_from_yaml(both, "b.yaml", {.missing_seq_len = 99}).seq_len, 8);
}

}  // namespace
}  // namespace axo
