// Every CPU op's backward against central finite differences of its forward
// (tolerance: |analytic − numeric| ≤ 3e-3 + 3e-2·|numeric|, fp32 forward,
// step 1e-2 on O(1) inputs), and the vectorized forwards (attention as GEMMs,
// GELU through Eigen's tanh) against their formulas in double precision
// (tolerance 1e-5 absolute on O(1) values).
#include "executor/cpu/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "tests/executor/random_values.h"

namespace axo::cpu {
namespace {

using testing::random_values;

// loss(x) = Σ w·f(x); checks d loss / d x[i] = analytic[i] for every i of x.
void expect_gradient(std::vector<float>& x, const std::vector<float>& analytic,
                     const std::function<double()>& loss, const char* what) {
  const float step = 1e-2f;
  for (size_t i = 0; i < x.size(); ++i) {
    const float saved = x[i];
    x[i] = saved + step;
    const double up = loss();
    x[i] = saved - step;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * step);
    EXPECT_NEAR(analytic[i], numeric, 3e-3 + 3e-2 * std::fabs(numeric)) << what << " element " << i;
  }
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += double(a[i]) * double(b[i]);
  return sum;
}

TEST(Ops, LayerNormBackward) {
  const int64_t N = 3, C = 8;
  auto in = random_values(N * C, 1), weight = random_values(C, 2), bias = random_values(C, 3);
  const auto w = random_values(N * C, 4);
  std::vector<float> out(N * C), mean(N), rstd(N);
  auto loss = [&] {
    layernorm_forward(out.data(), mean.data(), rstd.data(), in.data(), weight.data(), bias.data(), N, C);
    return dot(out, w);
  };
  loss();
  std::vector<float> din(N * C, 0), dweight(C, 0), dbias(C, 0);
  layernorm_backward(din.data(), dweight.data(), dbias.data(), w.data(), in.data(), weight.data(), mean.data(), rstd.data(), N, C);
  expect_gradient(in, din, loss, "layernorm input");
  expect_gradient(weight, dweight, loss, "layernorm weight");
  expect_gradient(bias, dbias, loss, "layernorm bias");
}

TEST(Ops, LinearBackward) {
  const int64_t N = 4, C = 5, OC = 3;
  auto in = random_values(N * C, 5), weight = random_values(OC * C, 6), bias = random_values(OC, 7);
  const auto w = random_values(N * OC, 8);
  std::vector<float> out(N * OC);
  auto loss = [&] {
    linear_forward(out.data(), in.data(), weight.data(), bias.data(), N, C, OC);
    return dot(out, w);
  };
  std::vector<float> din(N * C, 0), dweight(OC * C, 0), dbias(OC, 0);
  linear_backward(din.data(), dweight.data(), dbias.data(), w.data(), in.data(), weight.data(), N, C, OC);
  expect_gradient(in, din, loss, "linear input");
  expect_gradient(weight, dweight, loss, "linear weight");
  expect_gradient(bias, dbias, loss, "linear bias");
}

TEST(Ops, AttentionForwardIsCausalSoftmaxOfScaledDotProducts) {
  const int64_t B = 2, T = 5, C = 12, NH = 3, hs = C / NH;
  const auto qkv = random_values(B * T * 3 * C, 21);
  std::vector<float> out(B * T * C), att(B * NH * T * T);
  attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
  auto at = [&](int64_t b, int64_t t, int64_t part, int64_t h, int64_t i) {
    return double(qkv[size_t((b * T + t) * 3 * C + part * C + h * hs + i)]);
  };
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < NH; ++h) {
      for (int64_t t = 0; t < T; ++t) {
        std::vector<double> weight(size_t(T), 0.0);
        double total = 0;
        for (int64_t u = 0; u <= t; ++u) {
          double score = 0;
          for (int64_t i = 0; i < hs; ++i) score += at(b, t, 0, h, i) * at(b, u, 1, h, i);
          total += weight[size_t(u)] = std::exp(score / std::sqrt(double(hs)));
        }
        for (int64_t u = 0; u < T; ++u) {
          EXPECT_NEAR(att[size_t(((b * NH + h) * T + t) * T + u)], weight[size_t(u)] / total, 1e-5);
        }
        for (int64_t i = 0; i < hs; ++i) {
          double value = 0;
          for (int64_t u = 0; u <= t; ++u) value += weight[size_t(u)] / total * at(b, u, 2, h, i);
          EXPECT_NEAR(out[size_t((b * T + t) * C + h * hs + i)], value, 1e-5);
        }
      }
    }
  }
}

TEST(Ops, GeluForwardIsTheTanhApproximation) {
  const auto in = random_values(1000, 22, 3.0f);
  std::vector<float> out(in.size());
  gelu_forward(out.data(), in.data(), int64_t(in.size()));
  for (size_t i = 0; i < in.size(); ++i) {
    const double x = in[i];
    EXPECT_NEAR(out[i], 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))), 1e-5);
  }
}

TEST(Ops, AttentionBackward) {
  const int64_t B = 2, T = 4, C = 8, NH = 2;
  auto qkv = random_values(B * T * 3 * C, 9);
  const auto w = random_values(B * T * C, 10);
  std::vector<float> out(B * T * C), att(B * NH * T * T);
  auto loss = [&] {
    attention_forward(out.data(), att.data(), qkv.data(), B, T, C, NH);
    return dot(out, w);
  };
  loss();
  std::vector<float> dqkv(qkv.size(), 0), scratch(att.size(), 0);
  attention_backward(dqkv.data(), scratch.data(), w.data(), qkv.data(), att.data(), B, T, C, NH);
  expect_gradient(qkv, dqkv, loss, "attention qkv");
  // Causality: the output at t does not depend on later positions.
  auto before = out;
  qkv[(1 * T + 3) * 3 * C + C] += 5.0f;  // key of the last position of sequence 1
  loss();
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t c = 0; c < C; ++c) EXPECT_EQ(out[(1 * T + t) * C + c], before[(1 * T + t) * C + c]);
  }
}

TEST(Ops, GeluBackward) {
  auto in = random_values(20, 11, 2.0f);
  const auto w = random_values(20, 12);
  std::vector<float> out(20);
  auto loss = [&] {
    gelu_forward(out.data(), in.data(), 20);
    return dot(out, w);
  };
  std::vector<float> din(20, 0);
  gelu_backward(din.data(), w.data(), in.data(), 20);
  expect_gradient(in, din, loss, "gelu");
}

TEST(Ops, CrossEntropyBackward) {
  const int64_t BT = 3, V = 5, Vp = 8;
  auto logits = random_values(BT * Vp, 13);
  const std::vector<int> targets = {0, 4, 2};
  std::vector<float> probs(BT * Vp);
  auto loss = [&] { return double(cross_entropy_forward(probs.data(), logits.data(), targets.data(), BT, V, Vp)); };
  const double value = loss();
  EXPECT_GT(value, 0);
  std::vector<float> dlogits(BT * Vp, 0);
  cross_entropy_backward(dlogits.data(), probs.data(), targets.data(), BT, V, Vp);
  expect_gradient(logits, dlogits, loss, "cross-entropy logits");
  for (int64_t n = 0; n < BT; ++n) {
    for (int64_t v = V; v < Vp; ++v) EXPECT_EQ(dlogits[n * Vp + v], 0) << "padded columns get no gradient";
  }
}

TEST(Ops, EmbeddingAndResidualBackward) {
  const int64_t B = 2, T = 3, C = 4, V = 6;
  auto wte = random_values(V * C, 14), wpe = random_values(T * C, 15);
  const std::vector<int> tokens = {1, 5, 1, 0, 2, 5};
  const auto w = random_values(B * T * C, 16);
  std::vector<float> out(B * T * C);
  auto loss = [&] {
    embedding_forward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C);
    return dot(out, w);
  };
  std::vector<float> dwte(V * C, 0), dwpe(T * C, 0);
  embedding_backward(dwte.data(), dwpe.data(), w.data(), tokens.data(), B, T, C);
  expect_gradient(wte, dwte, loss, "token embedding");
  expect_gradient(wpe, dwpe, loss, "position embedding");
  std::vector<float> a = {1, 2}, b = {3, 4}, sum(2), da(2, 0), db(2, 0), d = {0.5f, -1};
  residual_forward(sum.data(), a.data(), b.data(), 2);
  EXPECT_EQ(sum, (std::vector<float>{4, 6}));
  residual_backward(da.data(), db.data(), d.data(), 2);
  EXPECT_EQ(da, d);
  EXPECT_EQ(db, d);
}

}  // namespace
}  // namespace axo::cpu
