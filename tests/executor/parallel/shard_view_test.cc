// Parameter and gradient views in fp32 or bf16: widening is exact, adding
// into a bf16 gradient rounds once per addition, and the GEMMs on a bf16
// weight or into a bf16 gradient equal gemm_bf16 on the rounded operands.
#include "executor/parallel/shard_view.h"

#include <gtest/gtest.h>

#include <vector>

#include "executor/cpu/gemm.h"

namespace axo {
namespace {

std::vector<float> values(size_t n, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i % 7) * step - 0.3f;
  return v;
}

std::vector<cpu::bfloat16> rounded(const std::vector<float>& v) {
  std::vector<cpu::bfloat16> r(v.size());
  cpu::to_bfloat16(v.data(), r.data(), int64_t(v.size()));
  return r;
}

TEST(ShardView, WidensAndAddsInEitherStorage) {
  const auto v = values(50, 0.137f);
  const auto h = rounded(v);
  std::vector<float> out(50);
  widen(ShardView(h.data()), out.data(), 50);
  for (size_t i = 0; i < 50; ++i) EXPECT_EQ(out[i], cpu::to_float(h[i]));
  widen(ShardView(v.data()), out.data(), 50);
  EXPECT_EQ(out, v);

  std::vector<float> g32(50, 1.0f);
  std::vector<cpu::bfloat16> g16(50, cpu::to_bfloat16(1.0f));
  add_to(ShardGrad(g32.data()), v.data(), 50);
  add_to(ShardGrad(g16.data()), v.data(), 50);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(g32[i], 1.0f + v[i]);
    EXPECT_EQ(g16[i].bits, cpu::to_bfloat16(1.0f + v[i]).bits);
  }
  EXPECT_EQ((ShardView(h.data()) + 3).bf16, h.data() + 3);
  EXPECT_FALSE(bool(ShardView()));
}

TEST(ShardView, GemmsOnBf16WeightsAndIntoBf16Gradients) {
  const int64_t m = 6, n = 5, k = 9;
  const auto a = values(size_t(m * k), 0.11f), w = values(size_t(n * k), 0.07f);
  const auto a16 = rounded(a), w16 = rounded(w);
  // Y[m,n] = A · Wᵀ with W in bf16.
  std::vector<float> y(size_t(m * n)), expected(size_t(m * n));
  gemm_weights(Precision::bf16, false, true, m, n, k, a.data(), k, ShardView(w16.data()), k, 0.0f, y.data(), n);
  cpu::gemm_bf16(false, true, m, n, k, 1.0f, a16.data(), k, w16.data(), k, 0.0f, expected.data(), n);
  EXPECT_EQ(y, expected);
  // dW[n,k] += Yᵀ · A into a bf16 gradient: one rounding of the fp32 sum with the old value.
  std::vector<cpu::bfloat16> dw(size_t(n * k), cpu::to_bfloat16(0.5f)), dw_expected = dw;
  const auto y16 = rounded(y);
  gemm_gradient(Precision::bf16, true, false, n, k, m, y.data(), n, a.data(), k, ShardGrad(dw.data()), k);
  cpu::gemm_bf16(true, false, n, k, m, 1.0f, y16.data(), n, a16.data(), k, 1.0f, dw_expected.data(), k);
  for (size_t i = 0; i < dw.size(); ++i) EXPECT_EQ(dw[i].bits, dw_expected[i].bits) << i;
}

}  // namespace
}  // namespace axo
