// GPT-2 forward and backward on the CPU backend (see gpt.h).
#include "executor/gpt/gpt.h"

#include <cmath>
#include <random>

#include "executor/cpu/ops.h"
#include "executor/timer.h"
#include "model/error.h"

namespace axo {

std::string to_string(const GptShape& s) {
  return std::to_string(s.layers) + " layers, " + std::to_string(s.heads) + " heads, " + std::to_string(s.channels) +
         " channels, sequence " + std::to_string(s.max_seq) + ", vocabulary " + std::to_string(s.vocab) +
         " (padded " + std::to_string(s.padded_vocab) + ")";
}

GptShape gpt_shape(const TransformerSpec& s) {
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw InputError(s.name + ": the CPU executor trains GPT-2's architecture: " + what);
  };
  const auto on_off = [](bool on) { return on ? "true" : "false"; };
  need(s.mlp == MlpKind::gelu && s.ffn_hidden == 4 * s.hidden,
       "needs a gelu MLP of 4*hidden = " + std::to_string(4 * s.hidden) + " (the model has mlp " + to_string(s.mlp) +
           ", ffn_hidden " + std::to_string(s.ffn_hidden) + ")");
  need(s.norm == NormKind::layernorm, std::string("needs layernorm (the model has norm ") + to_string(s.norm) + ")");
  need(s.positions == PositionKind::learned,
       std::string("needs learned positions (the model has positions ") + to_string(s.positions) + ")");
  need(s.bias && s.tied_embeddings, std::string("needs biases and a tied LM head (the model has bias ") +
                                        on_off(s.bias) + ", tied_embeddings " + on_off(s.tied_embeddings) + ")");
  need(s.kv_heads == s.heads, "needs as many key/value heads as heads (the model has kv_heads " +
                                  std::to_string(s.kv_heads) + " of " + std::to_string(s.heads) + ")");
  need(!s.qkv_bias && !s.qk_norm && s.norm_epsilon == kDefaultNormEpsilon,
       "needs LayerNorm's epsilon of 1e-5, a bias on every linear and no q/k norms");
  need(s.sliding_window == 0 || s.sliding_window >= s.seq_len, "attends over the whole sequence");
  if (!s.approximations.empty()) {
    need(false, "its config.json has details axo prices as the nearest it models, and it would train as those (" +
                    s.approximations.front() + (s.approximations.size() > 1 ? "; ..." : "") + ")");
  }
  need(!s.dropout, "trains without dropout (the model has it: a spec's dropout: true, a config.json's "
                   "attention_dropout or attn_pdrop)");
  GptShape g;
  g.layers = s.layers, g.heads = s.heads, g.channels = s.hidden, g.max_seq = s.position_rows(), g.vocab = s.vocab;
  g.padded_vocab = (s.vocab + 127) / 128 * 128;
  return g;
}

TransformerSpec gpt_spec(const GptShape& g, int64_t T) {
  TransformerSpec s;
  s.name = "gpt";
  s.layers = g.layers, s.hidden = g.channels, s.heads = g.heads, s.kv_heads = g.heads;
  s.ffn_hidden = 4 * g.channels, s.seq_len = T, s.vocab = g.vocab, s.global_batch = 1;
  if (g.max_seq > T) s.position_table = g.max_seq;  // sequences shorter than the table
  s.precision = Precision::fp32;
  return s;  // the defaults are GPT-2's: GELU, LayerNorm, learned positions, biases, tied head
}

void check_gpt_shape(const GptShape& g, const std::string& source) {
  for (int64_t v : {g.layers, g.heads, g.channels, g.max_seq, g.vocab, g.padded_vocab}) {
    if (v < 1 || v > (int64_t(1) << 24)) throw InputError(source + ": a model size is out of range [1, 2^24]");
  }
  if (g.channels % g.heads != 0 || g.padded_vocab < g.vocab) {
    throw InputError(source + ": inconsistent model shape (heads must divide channels, padded vocab >= vocab)");
  }
  const double C = double(g.channels);
  const double parameters = double(g.padded_vocab + g.max_seq) * C + double(g.layers) * (12 * C * C + 13 * C) + 2 * C;
  if (parameters > double(int64_t(1) << 40)) throw InputError(source + ": more than 2^40 parameters");
}

std::array<int64_t, kGptTensors> gpt_tensor_sizes(const GptShape& g) {
  const int64_t L = g.layers, C = g.channels;
  return {g.padded_vocab * C, g.max_seq * C, L * C, L * C, L * 3 * C * C, L * 3 * C,
          L * C * C,          L * C,         L * C, L * C, L * 4 * C * C, L * 4 * C,
          L * C * 4 * C,      L * C,         C,     C};
}

int64_t gpt_parameter_count(const GptShape& g) {
  int64_t total = 0;
  for (int64_t n : gpt_tensor_sizes(g)) total += n;
  return total;
}

namespace {

// Named views into the flat parameter (or gradient) array.
struct Tensors {
  float *wte, *wpe, *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb, *ln2w, *ln2b, *fcw, *fcb,
      *fcprojw, *fcprojb, *lnfw, *lnfb;
};

Tensors carve(float* base, const GptShape& g) {
  const auto sizes = gpt_tensor_sizes(g);
  float** fields[kGptTensors];
  Tensors t;
  float** all[] = {&t.wte, &t.wpe, &t.ln1w, &t.ln1b, &t.qkvw, &t.qkvb, &t.attprojw, &t.attprojb,
                   &t.ln2w, &t.ln2b, &t.fcw, &t.fcb, &t.fcprojw, &t.fcprojb, &t.lnfw, &t.lnfb};
  std::copy(std::begin(all), std::end(all), fields);
  for (int i = 0; i < kGptTensors; ++i) {
    *fields[i] = base;
    base += sizes[size_t(i)];
  }
  return t;
}

}  // namespace

// Views into one activation array for a B×T batch (L layers, C channels).
struct Gpt::Activations {
  float* encoded;    // [B,T,C]
  float* ln1;        // [L,B,T,C]
  float* ln1_mean;   // [L,B,T]
  float* ln1_rstd;   // [L,B,T]
  float* qkv;        // [L,B,T,3C]
  float* atty;       // [L,B,T,C]
  float* att;        // [L,B,NH,T,T]
  float* attproj;    // [L,B,T,C]
  float* residual2;  // [L,B,T,C]
  float* ln2;        // [L,B,T,C]
  float* ln2_mean;   // [L,B,T]
  float* ln2_rstd;   // [L,B,T]
  float* fch;        // [L,B,T,4C]
  float* fch_gelu;   // [L,B,T,4C]
  float* fcproj;     // [L,B,T,C]
  float* residual3;  // [L,B,T,C]
  float* lnf;        // [B,T,C]
  float* lnf_mean;   // [B,T]
  float* lnf_rstd;   // [B,T]
  float* logits;     // [B,T,Vp]
  float* probs;      // [B,T,Vp]

  static int64_t size(const GptShape& g, int64_t B, int64_t T) {
    Activations a{};
    return a.carve(nullptr, g, B, T);
  }
  // Points the views at base (may be null to count); returns the elements used.
  int64_t carve(float* base, const GptShape& g, int64_t B, int64_t T) {
    const int64_t L = g.layers, C = g.channels, NH = g.heads, BT = B * T, Vp = g.padded_vocab;
    int64_t used = 0;
    auto take = [&](float*& view, int64_t n) {
      view = base ? base + used : nullptr;
      used += n;
    };
    take(encoded, BT * C);
    take(ln1, L * BT * C), take(ln1_mean, L * BT), take(ln1_rstd, L * BT);
    take(qkv, L * BT * 3 * C), take(atty, L * BT * C), take(att, L * B * NH * T * T);
    take(attproj, L * BT * C), take(residual2, L * BT * C);
    take(ln2, L * BT * C), take(ln2_mean, L * BT), take(ln2_rstd, L * BT);
    take(fch, L * BT * 4 * C), take(fch_gelu, L * BT * 4 * C), take(fcproj, L * BT * C);
    take(residual3, L * BT * C);
    take(lnf, BT * C), take(lnf_mean, BT), take(lnf_rstd, BT);
    take(logits, BT * Vp), take(probs, BT * Vp);
    return used;
  }
};

Gpt::Gpt(const GptShape& shape)
    : shape_(shape),
      parameters_(size_t(gpt_parameter_count(shape)), 0.0f),
      gradients_(size_t(gpt_parameter_count(shape)), 0.0f) {}

void Gpt::initialize(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::normal_distribution<float> residual(0.0f, 0.02f / std::sqrt(2.0f * float(shape_.layers)));
  const Tensors p = carve(parameters_.data(), shape_);
  const auto sizes = gpt_tensor_sizes(shape_);
  float* starts[] = {p.wte, p.wpe, p.ln1w, p.ln1b, p.qkvw, p.qkvb, p.attprojw, p.attprojb,
                     p.ln2w, p.ln2b, p.fcw, p.fcb, p.fcprojw, p.fcprojb, p.lnfw, p.lnfb};
  for (int i = 0; i < kGptTensors; ++i) {
    float* t = starts[i];
    const int64_t n = sizes[size_t(i)];
    const bool layernorm_weight = t == p.ln1w || t == p.ln2w || t == p.lnfw;
    const bool bias = t == p.ln1b || t == p.ln2b || t == p.lnfb || t == p.qkvb || t == p.attprojb ||
                      t == p.fcb || t == p.fcprojb;
    const bool projection = t == p.attprojw || t == p.fcprojw;
    for (int64_t j = 0; j < n; ++j) {
      t[j] = layernorm_weight ? 1.0f : bias ? 0.0f : projection ? residual(rng) : normal(rng);
    }
  }
}

void Gpt::resize(int64_t B, int64_t T) {
  if (B == B_ && T == T_) return;
  const size_t n = size_t(Activations::size(shape_, B, T));
  acts_.assign(n, 0.0f);
  grad_acts_.assign(n, 0.0f);
  scratch_.assign(size_t(B * shape_.heads * T * T), 0.0f);
  B_ = B, T_ = T;
}

float Gpt::forward(const int* inputs, const int* targets, int64_t B, int64_t T) {
  if (T > shape_.max_seq) {
    throw InputError("sequence length " + std::to_string(T) + " exceeds the model's " +
                     std::to_string(shape_.max_seq));
  }
  resize(B, T);
  const int64_t L = shape_.layers, C = shape_.channels, NH = shape_.heads, BT = B * T;
  const int64_t V = shape_.vocab, Vp = shape_.padded_vocab;
  inputs_.assign(inputs, inputs + BT);
  for (int64_t i = 0; i < BT; ++i) {
    if (inputs[i] < 0 || inputs[i] >= V) {
      throw InputError("token " + std::to_string(inputs[i]) + " is outside the vocabulary of " +
                       std::to_string(V));
    }
  }
  const Tensors p = carve(parameters_.data(), shape_);
  Activations a{};
  a.carve(acts_.data(), shape_, B, T);

  timed(times_.embedding, [&] { cpu::embedding_forward(a.encoded, inputs, p.wte, p.wpe, B, T, C); });
  for (int64_t l = 0; l < L; ++l) {
    const float* in = l == 0 ? a.encoded : a.residual3 + (l - 1) * BT * C;
    float* ln1 = a.ln1 + l * BT * C;
    float* qkv = a.qkv + l * BT * 3 * C;
    float* atty = a.atty + l * BT * C;
    float* attproj = a.attproj + l * BT * C;
    float* residual2 = a.residual2 + l * BT * C;
    float* ln2 = a.ln2 + l * BT * C;
    float* fch = a.fch + l * BT * 4 * C;
    float* fch_gelu = a.fch_gelu + l * BT * 4 * C;
    float* fcproj = a.fcproj + l * BT * C;
    float* residual3 = a.residual3 + l * BT * C;
    timed(times_.layernorm, [&] {
      cpu::layernorm_forward(ln1, a.ln1_mean + l * BT, a.ln1_rstd + l * BT, in, p.ln1w + l * C, p.ln1b + l * C, BT, C);
    });
    timed(times_.gemm, [&] { cpu::linear_forward(qkv, ln1, p.qkvw + l * 3 * C * C, p.qkvb + l * 3 * C, BT, C, 3 * C); });
    timed(times_.attention, [&] { cpu::attention_forward(atty, a.att + l * B * NH * T * T, qkv, B, T, C, NH); });
    timed(times_.gemm, [&] { cpu::linear_forward(attproj, atty, p.attprojw + l * C * C, p.attprojb + l * C, BT, C, C); });
    timed(times_.residual, [&] { cpu::residual_forward(residual2, in, attproj, BT * C); });
    timed(times_.layernorm, [&] {
      cpu::layernorm_forward(ln2, a.ln2_mean + l * BT, a.ln2_rstd + l * BT, residual2, p.ln2w + l * C, p.ln2b + l * C, BT, C);
    });
    timed(times_.gemm, [&] { cpu::linear_forward(fch, ln2, p.fcw + l * 4 * C * C, p.fcb + l * 4 * C, BT, C, 4 * C); });
    timed(times_.gelu, [&] { cpu::gelu_forward(fch_gelu, fch, BT * 4 * C); });
    timed(times_.gemm, [&] { cpu::linear_forward(fcproj, fch_gelu, p.fcprojw + l * C * 4 * C, p.fcprojb + l * C, BT, 4 * C, C); });
    timed(times_.residual, [&] { cpu::residual_forward(residual3, residual2, fcproj, BT * C); });
  }
  const float* last = a.residual3 + (L - 1) * BT * C;
  timed(times_.layernorm, [&] { cpu::layernorm_forward(a.lnf, a.lnf_mean, a.lnf_rstd, last, p.lnfw, p.lnfb, BT, C); });
  timed(times_.gemm, [&] { cpu::linear_forward(a.logits, a.lnf, p.wte, nullptr, BT, C, Vp); });
  if (!targets) {
    targets_.clear();
    return 0;
  }
  for (int64_t i = 0; i < BT; ++i) {
    if (targets[i] < 0 || targets[i] >= V) {
      throw InputError("target token " + std::to_string(targets[i]) + " is outside the vocabulary of " +
                       std::to_string(V));
    }
  }
  targets_.assign(targets, targets + BT);
  float loss = 0;
  timed(times_.loss, [&] { loss = cpu::cross_entropy_forward(a.probs, a.logits, targets, BT, V, Vp); });
  return loss;
}

void Gpt::zero_gradients() { std::fill(gradients_.begin(), gradients_.end(), 0.0f); }

void Gpt::backward() {
  if (targets_.empty()) throw std::logic_error("Gpt::backward needs a forward with targets first");
  const int64_t B = B_, T = T_, L = shape_.layers, C = shape_.channels, NH = shape_.heads, BT = B * T;
  const int64_t V = shape_.vocab, Vp = shape_.padded_vocab;
  const Tensors p = carve(parameters_.data(), shape_);
  const Tensors g = carve(gradients_.data(), shape_);
  Activations a{}, d{};
  a.carve(acts_.data(), shape_, B, T);
  d.carve(grad_acts_.data(), shape_, B, T);
  std::fill(grad_acts_.begin(), grad_acts_.end(), 0.0f);

  timed(times_.loss, [&] { cpu::cross_entropy_backward(d.logits, a.probs, targets_.data(), BT, V, Vp); });
  timed(times_.gemm, [&] { cpu::linear_backward(d.lnf, g.wte, nullptr, d.logits, a.lnf, p.wte, BT, C, Vp); });
  const float* last = a.residual3 + (L - 1) * BT * C;
  float* dlast = d.residual3 + (L - 1) * BT * C;
  timed(times_.layernorm, [&] {
    cpu::layernorm_backward(dlast, g.lnfw, g.lnfb, d.lnf, last, p.lnfw, a.lnf_mean, a.lnf_rstd, BT, C);
  });
  for (int64_t l = L - 1; l >= 0; --l) {
    const float* in = l == 0 ? a.encoded : a.residual3 + (l - 1) * BT * C;
    float* din = l == 0 ? d.encoded : d.residual3 + (l - 1) * BT * C;
    const int64_t h = l * BT * C, h4 = l * BT * 4 * C, h3 = l * BT * 3 * C;
    timed(times_.residual, [&] { cpu::residual_backward(d.residual2 + h, d.fcproj + h, d.residual3 + h, BT * C); });
    timed(times_.gemm, [&] {
      cpu::linear_backward(d.fch_gelu + h4, g.fcprojw + l * C * 4 * C, g.fcprojb + l * C, d.fcproj + h,
                           a.fch_gelu + h4, p.fcprojw + l * C * 4 * C, BT, 4 * C, C);
    });
    timed(times_.gelu, [&] { cpu::gelu_backward(d.fch + h4, d.fch_gelu + h4, a.fch + h4, BT * 4 * C); });
    timed(times_.gemm, [&] {
      cpu::linear_backward(d.ln2 + h, g.fcw + l * 4 * C * C, g.fcb + l * 4 * C, d.fch + h4, a.ln2 + h,
                           p.fcw + l * 4 * C * C, BT, C, 4 * C);
    });
    timed(times_.layernorm, [&] {
      cpu::layernorm_backward(d.residual2 + h, g.ln2w + l * C, g.ln2b + l * C, d.ln2 + h, a.residual2 + h,
                              p.ln2w + l * C, a.ln2_mean + l * BT, a.ln2_rstd + l * BT, BT, C);
    });
    timed(times_.residual, [&] { cpu::residual_backward(din, d.attproj + h, d.residual2 + h, BT * C); });
    timed(times_.gemm, [&] {
      cpu::linear_backward(d.atty + h, g.attprojw + l * C * C, g.attprojb + l * C, d.attproj + h, a.atty + h,
                           p.attprojw + l * C * C, BT, C, C);
    });
    timed(times_.attention, [&] {
      std::fill(scratch_.begin(), scratch_.end(), 0.0f);
      cpu::attention_backward(d.qkv + h3, scratch_.data(), d.atty + h, a.qkv + h3, a.att + l * B * NH * T * T, B,
                              T, C, NH);
    });
    timed(times_.gemm, [&] {
      cpu::linear_backward(d.ln1 + h, g.qkvw + l * 3 * C * C, g.qkvb + l * 3 * C, d.qkv + h3, a.ln1 + h,
                           p.qkvw + l * 3 * C * C, BT, C, 3 * C);
    });
    timed(times_.layernorm, [&] {
      cpu::layernorm_backward(din, g.ln1w + l * C, g.ln1b + l * C, d.ln1 + h, in, p.ln1w + l * C,
                              a.ln1_mean + l * BT, a.ln1_rstd + l * BT, BT, C);
    });
  }
  timed(times_.embedding, [&] { cpu::embedding_backward(g.wte, g.wpe, d.encoded, inputs_.data(), B, T, C); });
}

double gpt_training_flops(const GptShape& shape, int64_t B, int64_t T) {
  const double C = double(shape.channels), L = double(shape.layers), tokens = double(B * T);
  const double matmul_params = L * 12.0 * C * C + double(shape.padded_vocab) * C;
  // Forward 2 FLOPs per parameter per token plus causal attention (≈ 2·T·C per
  // token per layer for scores and context, half of the full square); ×3 for backward.
  return 3.0 * (2.0 * matmul_params * tokens + 2.0 * L * double(T) * C * tokens);
}

}  // namespace axo
