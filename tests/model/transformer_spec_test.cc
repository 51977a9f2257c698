// Model specs: parameter and FLOP formulas, YAML and Hugging Face input.
#include "model/transformer_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "model/error.h"
#include "model/hf_config.h"
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
  // A gated MLP has no default width, as a config.json's (llama2-7b without its ffn_hidden was 8.85B).
  const std::string gated = "name: x\nlayers: 2\nhidden: 128\nheads: 4\nseq_len: 8\nvocab: 10\nglobal_batch: 1\n"
                            "mlp: swiglu\nnorm: rmsnorm\npositions: rope\n";
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_yaml(load_yaml_text(gated, "g.yaml"), "g.yaml"); })
                .find("g.yaml:1:1: field 'ffn_hidden': missing: a gated MLP (mlp: swiglu) has no default width"),
            std::string::npos);
  EXPECT_EQ(transformer_spec_from_yaml(load_yaml_text(gated + "ffn_hidden: 344\n", "g.yaml"), "g.yaml").ffn_hidden, 344);
  // A config.json under another name reads as YAML: it is named for what it is.
  EXPECT_NE(testing::input_error_of([] {
              transformer_spec_from_yaml(load_yaml_text("{\"model_type\": \"llama\", \"hidden_size\": 64}", "config"),
                                         "config");
            }).find("config:1:16: field 'model_type': a Hugging Face config.json's key"),
            std::string::npos);
  EXPECT_TRUE(is_hf_config_path("a/cfg.JSON"));
  EXPECT_FALSE(is_hf_config_path("gpt3-1.3b"));
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
  EXPECT_EQ(back.rope_theta, 500000);  // Llama 3's (Table 3)
}

// The details only the exports state, and a config.json's approximations, travel in YAML (a
// plan.yaml's model): a plan of an OPT config.json is not trained as GELU's.
TEST(TransformerSpec, StatedDetailsAndApproximationsRoundTrip) {
  TransformerSpec spec = load_model("llama3-8b");
  spec.rotary_percent = 0.25, spec.rope_scaling_factor = 8, spec.norm_epsilon = 1e-6, spec.qkv_bias = true;
  spec.sliding_window = 4096;
  spec.approximations = {"an MLP of relu, priced as GELU's"};
  const TransformerSpec back = transformer_spec_from_yaml(to_yaml(spec), "round-trip");
  EXPECT_EQ(back.rotary_percent, 0.25);
  EXPECT_EQ(back.rope_scaling_factor, 8);
  EXPECT_EQ(back.norm_epsilon, 1e-6);
  EXPECT_TRUE(back.qkv_bias);
  EXPECT_EQ(back.sliding_window, 4096);
  EXPECT_EQ(back.approximations, spec.approximations);
  EXPECT_EQ(back.parameter_count(), spec.parameter_count());
  YAML::Node both = to_yaml(spec);
  both["bias"] = true;
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_yaml(both, "s.yaml"); })
                .find("field 'qkv_bias': biases on q, k and v alone, and `bias` puts one on every linear"),
            std::string::npos);
}

// A rotary base belongs to rotary positions; 10000 (RoFormer's) where none is given.
TEST(TransformerSpec, RopeThetaIsRotarysOnly) {
  YAML::Node node = to_yaml(load_model("llama2-7b"));
  EXPECT_FALSE(node["rope_theta"]);  // the default is not written
  EXPECT_EQ(transformer_spec_from_yaml(node, "s.yaml").rope_theta, kDefaultRopeTheta);
  node = to_yaml(load_model("gpt2-124m"));
  node["rope_theta"] = 500000;
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_yaml(node, "s.yaml"); })
                .find("field 'rope_theta': the model's positions are learned"),
            std::string::npos);
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
