// Parameter and gradient views in fp32 or a 2-byte format (bf16, fp16):
// widening is exact, adding into a 2-byte gradient rounds once per
// addition, and the GEMMs on a 2-byte weight or into a 2-byte gradient equal
// gemm_half on the rounded operands, in each format.
#include "executor/parallel/shard_view.h"

#include <gtest/gtest.h>

#include <vector>

#include "executor/cpu/gemm.h"

namespace axo {
namespace {

using cpu::HalfFormat;

std::vector<float> values(size_t n, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i % 7) * step - 0.3f;
  return v;
}

std::vector<cpu::Half> rounded(const std::vector<float>& v, HalfFormat format) {
  std::vector<cpu::Half> r(v.size());
  cpu::to_half(v.data(), r.data(), int64_t(v.size()), format);
  return r;
}

class ShardViewIn : public testing::TestWithParam<HalfFormat> {};

TEST_P(ShardViewIn, WidensAndAddsInEitherStorage) {
  const HalfFormat f = GetParam();
  const int64_t n = 300;  // more than add_to's block of 256
  const auto v = values(size_t(n), 0.137f);
  const auto h = rounded(v, f);
  std::vector<float> out(static_cast<size_t>(n));
  widen(ShardView(h.data(), f), out.data(), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(out[size_t(i)], cpu::to_float(h[size_t(i)], f));
  widen(ShardView(v.data()), out.data(), n);
  EXPECT_EQ(out, v);

  std::vector<float> g32(size_t(n), 1.0f);
  std::vector<cpu::Half> g16(size_t(n), cpu::to_half(1.0f, f));
  add_to(ShardGrad(g32.data()), v.data(), n);
  add_to(ShardGrad(g16.data(), f), v.data(), n);
  for (size_t i = 0; i < size_t(n); ++i) {
    EXPECT_EQ(g32[i], 1.0f + v[i]);
    EXPECT_EQ(g16[i].bits, cpu::to_half(1.0f + v[i], f).bits);
  }
  const ShardView shifted = ShardView(h.data(), f) + 3;
  EXPECT_EQ(shifted.half, h.data() + 3);
  EXPECT_EQ(shifted.format, f);
  EXPECT_FALSE(bool(ShardView()));
}

TEST_P(ShardViewIn, GemmsOnHalfWeightsAndIntoHalfGradients) {
  const HalfFormat f = GetParam();
  const Precision precision = f == HalfFormat::bf16 ? Precision::bf16 : Precision::fp16;
  const int64_t m = 6, n = 5, k = 9;
  const auto a = values(size_t(m * k), 0.11f), w = values(size_t(n * k), 0.07f);
  const auto a16 = rounded(a, f), w16 = rounded(w, f);
  // Y[m,n] = A · Wᵀ with W in the 2-byte format.
  std::vector<float> y(size_t(m * n)), expected(size_t(m * n));
  gemm_weights(precision, false, true, m, n, k, a.data(), k, ShardView(w16.data(), f), k, 0.0f, y.data(), n);
  cpu::gemm_half(f, false, true, m, n, k, 1.0f, a16.data(), k, w16.data(), k, 0.0f, expected.data(), n);
  EXPECT_EQ(y, expected);
  // dW[n,k] += Yᵀ · A into a 2-byte gradient: one rounding of the fp32 sum with the old value.
  std::vector<cpu::Half> dw(size_t(n * k), cpu::to_half(0.5f, f)), dw_expected = dw;
  const auto y16 = rounded(y, f);
  gemm_gradient(precision, true, false, n, k, m, y.data(), n, a.data(), k, ShardGrad(dw.data(), f), k);
  cpu::gemm_half(f, true, false, n, k, m, 1.0f, y16.data(), n, a16.data(), k, 1.0f, dw_expected.data(), k);
  for (size_t i = 0; i < dw.size(); ++i) EXPECT_EQ(dw[i].bits, dw_expected[i].bits) << i;
}

INSTANTIATE_TEST_SUITE_P(Formats, ShardViewIn, testing::Values(HalfFormat::bf16, HalfFormat::fp16),
                         [](const testing::TestParamInfo<HalfFormat>& info) { return cpu::to_string(info.param); });

}  // namespace
}  // namespace axo
