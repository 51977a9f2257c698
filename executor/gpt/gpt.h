// A GPT-2 model on the CPU backend: parameters in one allocation carved
// into llm.c's sixteen tensors, activations for a B×T batch, forward with
// the mean cross-entropy loss, and backward into gradients of the same
// layout. Time per kind of operation is kept for run.json.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/transformer_spec.h"

namespace axo {

// The sizes a GPT-2 model is made of (llm.c names: L, NH, C, maxT, V, Vp).
struct GptShape {
  int64_t layers = 0, heads = 0, channels = 0, max_seq = 0, vocab = 0, padded_vocab = 0;
  bool operator==(const GptShape&) const = default;
};
// "12 layers, 12 heads, 768 channels, sequence 1024, vocabulary 50257 (padded 50304)"
std::string to_string(const GptShape& shape);

// The GPT-2 shape of a spec; InputError if the spec is not GPT-2's
// architecture (GELU MLP of 4h, LayerNorm, learned positions, biases, tied
// head, no grouped-query attention). The vocabulary is padded to 128.
GptShape gpt_shape(const TransformerSpec& spec);
// The inverse: GPT-2's architecture at this shape, sequences of T tokens.
TransformerSpec gpt_spec(const GptShape& shape, int64_t T);

// InputError naming `source` unless every size is positive, heads divide
// channels, the padded vocabulary holds the vocabulary and the model has at
// most 2^40 parameters (so every count below fits in 64 bits). Readers of
// model files and checkpoints call it before they allocate.
void check_gpt_shape(const GptShape& shape, const std::string& source);

constexpr int kGptTensors = 16;
// Elements of each parameter tensor in llm.c's order: wte (Vp·C), wpe (maxT·C),
// ln1w, ln1b (L·C), qkvw (L·3C·C), qkvb (L·3C), attprojw (L·C·C), attprojb (L·C),
// ln2w, ln2b (L·C), fcw (L·4C·C), fcb (L·4C), fcprojw (L·C·4C), fcprojb (L·C),
// lnfw, lnfb (C).
std::array<int64_t, kGptTensors> gpt_tensor_sizes(const GptShape& shape);
int64_t gpt_parameter_count(const GptShape& shape);
// FLOPs of one forward+backward over B·T tokens (2 per multiply-add, matmuls and attention).
double gpt_training_flops(const GptShape& shape, int64_t B, int64_t T);

// Seconds spent per kind of operation since the last reset.
struct OpTimes {
  double gemm = 0, attention = 0, layernorm = 0, gelu = 0, embedding = 0, loss = 0, residual = 0;
  double total() const { return gemm + attention + layernorm + gelu + embedding + loss + residual; }
};

class Gpt {
 public:
  explicit Gpt(const GptShape& shape);

  const GptShape& shape() const { return shape_; }
  std::vector<float>& parameters() { return parameters_; }
  const std::vector<float>& parameters() const { return parameters_; }
  std::vector<float>& gradients() { return gradients_; }

  // GPT-2's initialisation: weights N(0, 0.02), the two residual projections
  // N(0, 0.02/√(2L)), LayerNorm weights 1, biases 0.
  void initialize(uint64_t seed);

  // Forward over inputs[B·T]; with targets, returns the mean loss.
  float forward(const int* inputs, const int* targets, int64_t B, int64_t T);
  void zero_gradients();
  // Backward of the last forward (which had targets); adds into gradients().
  void backward();

  OpTimes& times() { return times_; }

 private:
  struct Activations;
  void resize(int64_t B, int64_t T);
  GptShape shape_;
  std::vector<float> parameters_, gradients_;
  std::vector<float> acts_, grad_acts_, scratch_;
  std::vector<int> inputs_, targets_;
  int64_t B_ = 0, T_ = 0;
  OpTimes times_;
};

}  // namespace axo
