// Hugging Face config.json input: each family's keys to a TransformerSpec, and the refusals.
#include "model/hf_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/error.h"
#include "model/presets.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {
TEST(HfConfig, LlamaAndGpt2CountTheirPresetsParameters) {
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
TEST(HfConfig, FalconHeadsBiasAndPositions) {
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
  // A Llama config's attention_bias alone is biases on the attention's linears only, priced
  // without them (an approximation the exports refuse); with mlp_bias, every linear has one.
  // GPT-NeoX's rotary_pct is rotary.
  nlohmann::json llama = {{"model_type", "llama"}, {"hidden_size", 512}, {"num_hidden_layers", 2},
                          {"num_attention_heads", 8}, {"vocab_size", 1000}, {"max_position_embeddings", 128},
                          {"intermediate_size", 1376}, {"attention_bias", true}};
  const TransformerSpec attention_biased = transformer_spec_from_hf_config(llama, "l.json");
  EXPECT_FALSE(attention_biased.bias);
  ASSERT_EQ(attention_biased.approximations.size(), 1u);
  EXPECT_EQ(attention_biased.approximations[0],
            "biases on the attention's linears only (attention_bias: true), priced without them");
  llama["mlp_bias"] = true;
  EXPECT_TRUE(transformer_spec_from_hf_config(llama, "l.json").bias);
  EXPECT_TRUE(transformer_spec_from_hf_config(llama, "l.json").approximations.empty());
  llama.erase("mlp_bias");
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

TEST(HfConfig, GemmaIsGatedAndTied) {
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

TEST(HfConfig, LlamaWithGeluIsStillGated) {
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
TEST(HfConfig, HeadDimOtherThanHiddenOverHeadsIsRefused) {
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

TEST(HfConfig, MixtureOfExpertsIsRefused) {
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

// ERNIE 4.5's experts are moe_num_experts (baidu/ERNIE-4.5-21B-A3B: 64, 6 a token): 21B, not the
// 3.35B of its dense part.
TEST(HfConfig, ErnieExpertsAreRefused) {
  const nlohmann::json ernie = {{"model_type", "ernie4_5_moe"}, {"hidden_size", 2560}, {"num_hidden_layers", 28},
                                {"num_attention_heads", 20},    {"num_key_value_heads", 4},
                                {"intermediate_size", 12288},   {"max_position_embeddings", 131072},
                                {"vocab_size", 103424},         {"moe_num_experts", 64}, {"moe_k", 6}};
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(ernie, "ernie.json"); })
                .find("field 'moe_num_experts': 64: a mixture-of-experts model"),
            std::string::npos);
}

// Encoder-decoders (T5's is_encoder_decoder), encoder-only models (BERT's ...ForMaskedLM), ALiBi
// families (BLOOM, MPT: no alibi key) and OPT-350M's projected embedding are refused by name,
// not by the first field their keys lack.
TEST(HfConfig, ModelsATransformerSpecCannotHoldAreRefusedByWhatTheyAre) {
  const nlohmann::json t5 = {{"architectures", {"T5ForConditionalGeneration"}}, {"model_type", "t5"},
                             {"d_model", 512}, {"num_heads", 8}, {"num_layers", 6}, {"is_encoder_decoder", true}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(t5, "t5.json"); }),
            "t5.json: field 'is_encoder_decoder': an encoder-decoder model; axo plans decoder-only transformers");
  const nlohmann::json bert = {{"architectures", {"BertForMaskedLM"}}, {"model_type", "bert"},
                               {"hidden_size", 768}, {"num_hidden_layers", 12}, {"num_attention_heads", 12},
                               {"max_position_embeddings", 512}, {"vocab_size", 30522}};
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(bert, "bert.json"); })
                .find("field 'architectures': [\"BertForMaskedLM\"]: no causal language-model head"),
            std::string::npos);
  const nlohmann::json bloom = {{"architectures", {"BloomForCausalLM"}}, {"model_type", "bloom"},
                                {"hidden_size", 1024}, {"n_layer", 24}, {"n_head", 16}, {"vocab_size", 250880}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(bloom, "bloom.json"); }),
            "bloom.json: field 'model_type': bloom attends with ALiBi biases; axo prices learned or rotary positions");
  const nlohmann::json mpt = {{"architectures", {"MPTForCausalLM"}}, {"model_type", "mpt"}, {"d_model", 4096},
                              {"n_layers", 32}, {"n_heads", 32}, {"attn_config", {{"alibi", true}}}};
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(mpt, "mpt.json"); }).find("mpt attends with ALiBi"),
            std::string::npos);
  nlohmann::json opt = {{"architectures", {"OPTForCausalLM"}}, {"model_type", "opt"}, {"hidden_size", 1024},
                        {"word_embed_proj_dim", 512}, {"num_hidden_layers", 24}, {"num_attention_heads", 16},
                        {"ffn_dim", 4096}, {"max_position_embeddings", 2048}, {"vocab_size", 50272}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(opt, "opt.json"); }),
            "opt.json: field 'word_embed_proj_dim': 512 is not hidden_size 1024: axo's embedding is as wide as the "
            "hidden size");
  opt["word_embed_proj_dim"] = 1024;  // OPT-1.3B's, and most OPTs': as wide as the hidden size
  EXPECT_EQ(transformer_spec_from_hf_config(opt, "opt.json").hidden, 1024);
}

// GPT-J marks its rotary positions with rotary_dim alone: a --seq beyond n_positions is its to take.
// RecurrentGemma's recurrent blocks and Mamba's state-space ones are no transformer layers.
TEST(HfConfig, GptJIsRotaryAndRecurrentBlocksAreRefused) {
  const nlohmann::json gptj = {{"architectures", {"GPTJForCausalLM"}}, {"model_type", "gptj"}, {"n_embd", 4096},
                               {"n_layer", 28}, {"n_head", 16}, {"n_positions", 2048}, {"rotary_dim", 64},
                               {"vocab_size", 50400}};
  const TransformerSpec spec = transformer_spec_from_hf_config(gptj, "gptj.json", {0, 4096});
  EXPECT_EQ(spec.positions, PositionKind::rope);
  EXPECT_EQ(spec.seq_len, 4096);
  const nlohmann::json recurrent = {{"architectures", {"RecurrentGemmaForCausalLM"}}, {"model_type", "recurrent_gemma"},
                                    {"hidden_size", 2560}, {"num_hidden_layers", 26}, {"num_attention_heads", 10},
                                    {"block_types", {"recurrent", "recurrent", "attention"}}, {"vocab_size", 256000}};
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(recurrent, "rg.json"); })
                .find("has blocks other than attention"),
            std::string::npos);
  nlohmann::json unnamed = recurrent;  // no architectures, no model_type: its blocks say it
  unnamed.erase("architectures"), unnamed.erase("model_type");
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(unnamed, "rg.json"); })
                .find("field 'block_types': [\"recurrent\",\"recurrent\",\"attention\"]: blocks other than attention"),
            std::string::npos);
  const nlohmann::json mamba = {{"model_type", "mamba"}, {"hidden_size", 768}, {"num_hidden_layers", 24},
                                {"vocab_size", 50280}};  // as state-spaces/mamba-130m's: no architectures
  EXPECT_NE(testing::input_error_of([&] { transformer_spec_from_hf_config(mamba, "mamba.json"); })
                .find("field 'model_type': mamba has blocks other than attention"),
            std::string::npos);
}

// Qwen-7B (v1): intermediate_size 22016 is both SwiGLU branches. 7,721,324,544 parameters on its
// model card, its QKV biases (c_attn's: 32 layers x 3 x 4096) included.
TEST(HfConfig, QwenOneCountsHalfItsIntermediateSizePerBranch) {
  const nlohmann::json qwen = {{"architectures", {"QWenLMHeadModel"}}, {"model_type", "qwen"},
                               {"hidden_size", 4096}, {"intermediate_size", 22016}, {"num_attention_heads", 32},
                               {"num_hidden_layers", 32}, {"max_position_embeddings", 8192}, {"no_bias", true},
                               {"vocab_size", 151936}, {"rotary_emb_base", 10000}, {"tie_word_embeddings", false}};
  const TransformerSpec spec = transformer_spec_from_hf_config(qwen, "qwen.json");
  EXPECT_EQ(spec.mlp, MlpKind::swiglu);
  EXPECT_EQ(spec.ffn_hidden, 11008);
  EXPECT_TRUE(spec.qkv_bias);
  EXPECT_EQ(spec.parameter_count(), 7721324544);
}

// GPT-2 has 1024 learned positions: --seq 8192 has none to look up; rotary models take any length.
TEST(HfConfig, ASequenceLongerThanTheLearnedPositionsIsRefused) {
  const nlohmann::json gpt2 = {{"n_layer", 12}, {"n_embd", 768}, {"n_head", 12}, {"n_positions", 1024},
                               {"vocab_size", 50257}};
  EXPECT_EQ(testing::input_error_of([&] { transformer_spec_from_hf_config(gpt2, "gpt2.json", {0, 8192}); }),
            "gpt2.json: sequence length 8192 is longer than the 1024 learned positions of max_position_embeddings "
            "(n_positions)");
  EXPECT_EQ(transformer_spec_from_hf_config(gpt2, "gpt2.json", {0, 512}).seq_len, 512);
  const nlohmann::json llama = {{"model_type", "llama"}, {"hidden_size", 4096}, {"num_hidden_layers", 32},
                                {"num_attention_heads", 32}, {"intermediate_size", 11008},
                                {"max_position_embeddings", 4096}, {"vocab_size", 32000}};
  EXPECT_EQ(transformer_spec_from_hf_config(llama, "llama.json", {0, 8192}).seq_len, 8192);
}

// torch_dtype is the checkpoint's storage (Llama 2: float16, OLMo: float32): the plan is bf16.
TEST(HfConfig, TheStorageDtypeIsNotTheTrainingPrecision) {
  nlohmann::json llama = {{"model_type", "llama"}, {"hidden_size", 4096}, {"num_hidden_layers", 32},
                          {"num_attention_heads", 32}, {"intermediate_size", 11008},
                          {"max_position_embeddings", 4096}, {"vocab_size", 32000}};
  for (const char* dtype : {"float16", "float32", "bfloat16"}) {
    llama["torch_dtype"] = dtype;
    EXPECT_EQ(transformer_spec_from_hf_config(llama, "llama.json").precision, Precision::bf16) << dtype;
  }
}

}  // namespace
}  // namespace axo
