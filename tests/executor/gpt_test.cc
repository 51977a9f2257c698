// The whole GPT: gradients against finite differences of the loss, and the
// llm.c model file round trip.
#include "executor/gpt/gpt.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "executor/gpt/llmc_checkpoint.h"
#include "model/error.h"
#include "model/presets.h"
#include "tests/input_error_of.h"

namespace axo {
namespace {

GptShape tiny() { return {1, 2, 16, 8, 32, 128}; }

TEST(Gpt, GradientsMatchFiniteDifferences) {
  Gpt model(tiny());
  model.initialize(7);
  for (float& p : model.parameters()) p *= 5;  // larger weights: a loss that moves
  const int64_t B = 2, T = 8;
  std::vector<int> inputs(B * T), targets(B * T);
  std::mt19937 rng(3);
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = int(rng() % 32), targets[i] = int(rng() % 32);
  model.zero_gradients();
  model.forward(inputs.data(), targets.data(), B, T);
  model.backward();
  const std::vector<float> analytic = model.gradients();
  std::vector<float>& p = model.parameters();
  // Sample parameters from every tensor.
  const auto sizes = gpt_tensor_sizes(tiny());
  size_t offset = 0, checked = 0;
  for (int t = 0; t < kGptTensors; ++t) {
    for (int k = 0; k < 4; ++k) {
      // Token rows that occur in the inputs, so the embedding gradient is non-trivial.
      const size_t i = t == 0 ? size_t(inputs[size_t(k)] * 16 + k) : offset + size_t(rng() % uint32_t(sizes[size_t(t)]));
      const float saved = p[i], step = 1e-2f;
      p[i] = saved + step;
      const double up = model.forward(inputs.data(), targets.data(), B, T);
      p[i] = saved - step;
      const double down = model.forward(inputs.data(), targets.data(), B, T);
      p[i] = saved;
      const double numeric = (up - down) / (2 * step);
      EXPECT_NEAR(analytic[i], numeric, 2e-3 + 5e-2 * std::fabs(numeric)) << "tensor " << t << " element " << i;
      ++checked;
    }
    offset += size_t(sizes[size_t(t)]);
  }
  EXPECT_EQ(checked, size_t(4 * kGptTensors));
}

TEST(Gpt, LlmcModelFileRoundTrip) {
  Gpt model(gpt_shape(load_model("gpt2-tiny")));
  model.initialize(11);
  const std::string path = (std::filesystem::temp_directory_path() / ("axo_llmc_" + std::to_string(::getpid()) + ".bin")).string();
  write_llmc_model(path, model.shape(), model.parameters());
  EXPECT_EQ(std::filesystem::file_size(path), 1024 + model.parameters().size() * 4);
  GptShape shape;
  std::vector<float> parameters;
  read_llmc_model(path, shape, parameters);
  EXPECT_EQ(shape, model.shape());
  EXPECT_EQ(parameters, model.parameters());
  // A NaN weight is a damaged file, named where it is read (not steps later as a gradient of nan).
  std::vector<float> damaged = model.parameters();
  damaged[994] = std::nanf("");
  write_llmc_model(path, model.shape(), damaged);
  EXPECT_EQ(testing::input_error_of([&] { read_llmc_model(path, shape, parameters); }),
            path + ": parameter 994 is nan: the model file is damaged");
  write_llmc_model(path, model.shape(), model.parameters());
  // A file longer than its header says (another model's, or bytes appended) is not this model's.
  std::filesystem::resize_file(path, 1024 + model.parameters().size() * 4 + 400);
  try {
    read_llmc_model(path, shape, parameters);
    FAIL();
  } catch (const InputError& e) {
    const std::string bytes = std::to_string(model.parameters().size() * 4);
    EXPECT_NE(std::string(e.what()).find("parameters (" + bytes + " bytes), the file holds " +
                                         std::to_string(model.parameters().size() * 4 + 400) + " bytes after the header"),
              std::string::npos)
        << e.what();
  }
  // A truncated file and a wrong magic are reported, not read.
  std::filesystem::resize_file(path, 2000);
  EXPECT_THROW(read_llmc_model(path, shape, parameters), InputError);
  std::ofstream(path, std::ios::binary) << std::string(1024, '\0');
  EXPECT_THROW(read_llmc_model(path, shape, parameters), InputError);
  std::filesystem::remove(path);
}

TEST(Gpt, OnlyGpt2ArchitectureIsAccepted) {
  EXPECT_THROW(gpt_shape(load_model("llama2-7b")), InputError);
  TransformerSpec with_dropout = load_model("gpt2-tiny");
  with_dropout.dropout = true;  // trained without, silently, before
  EXPECT_THROW(gpt_shape(with_dropout), InputError);
  const GptShape g = gpt_shape(load_model("gpt2-124m"));
  EXPECT_EQ(g.padded_vocab, 50304);
  EXPECT_EQ(gpt_parameter_count(g), 124475904);  // llm.c's GPT-2 124M with the padded vocabulary
  // A table longer than the sequence trained keeps its rows (GPT-2's 1024 at 512), as the plan prices it.
  TransformerSpec shorter = load_model("gpt2-124m");
  shorter.position_table = shorter.seq_len, shorter.seq_len = 512;
  EXPECT_EQ(gpt_shape(shorter).max_seq, 1024);
  EXPECT_EQ(gpt_spec(gpt_shape(shorter), 512).parameter_count(), shorter.parameter_count());
  // The refusal names the model's own values.
  TransformerSpec narrow = load_model("gpt2-tiny");
  narrow.ffn_hidden = 4 * narrow.hidden - 2;
  EXPECT_NE(testing::input_error_of([&] { gpt_shape(narrow); })
                .find("needs a gelu MLP of 4*hidden = " + std::to_string(4 * narrow.hidden) +
                      " (the model has mlp gelu, ffn_hidden " + std::to_string(narrow.ffn_hidden) + ")"),
            std::string::npos);
  TransformerSpec qwen_like = load_model("gpt2-tiny");
  qwen_like.bias = false, qwen_like.qkv_bias = true;
  EXPECT_THROW(gpt_shape(qwen_like), InputError);
}

}  // namespace
}  // namespace axo
