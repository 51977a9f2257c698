// Model specs: parameter and FLOP formulas, YAML and Hugging Face input.
#include "model/transformer_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "model/error.h"
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

}  // namespace
}  // namespace axo
