// GEMMs at a training precision: fp32 is gemm() bit for bit; bf16 and fp16
// are gemm_half on the operands rounded to nearest even, bit for bit, and
// stay within the format's round-off of the fp32 product.
#include "executor/cpu/gemm_precision.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace axo::cpu {
namespace {

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<Half> rounded(const std::vector<float>& v, HalfFormat format) {
  std::vector<Half> r(v.size());
  to_half(v.data(), r.data(), int64_t(v.size()), format);
  return r;
}

constexpr int64_t kM = 37, kN = 29, kK = 53;

TEST(GemmPrecision, Fp32IsGemmBitForBit) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = random_values(size_t(kM * kK), 1), b = random_values(size_t(kK * kN), 2);
      const int64_t lda = ta ? kM : kK, ldb = tb ? kK : kN;
      std::vector<float> c = random_values(size_t(kM * kN), 3), expected = c;
      gemm(Precision::fp32, ta, tb, kM, kN, kK, 0.5f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), kN);
      gemm(ta, tb, kM, kN, kK, 0.5f, a.data(), lda, b.data(), ldb, 1.0f, expected.data(), kN);
      EXPECT_EQ(c, expected) << ta << tb;
    }
  }
}

// gemm at `precision` against gemm_half on rounded operands and the fp32 product; `unit`: the format's roundoff.
void expect_rounded_gemm(Precision precision, double unit) {
  const HalfFormat format = half_format(precision);
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = random_values(size_t(kM * kK), 4), b = random_values(size_t(kK * kN), 5);
      const int64_t lda = ta ? kM : kK, ldb = tb ? kK : kN;
      std::vector<float> c = random_values(size_t(kM * kN), 6), expected = c, exact = c;
      gemm(precision, ta, tb, kM, kN, kK, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), kN);
      const auto a16 = rounded(a, format), b16 = rounded(b, format);
      gemm_half(format, ta, tb, kM, kN, kK, 1.0f, a16.data(), lda, b16.data(), ldb, 1.0f, expected.data(), kN);
      EXPECT_EQ(c, expected) << ta << tb;
      // Against fp32: each product term carries two roundings of `unit` at most; |terms| ≤ 1, K of them.
      gemm(ta, tb, kM, kN, kK, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, exact.data(), kN);
      double worst = 0;
      for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, double(std::fabs(c[i] - exact[i])));
      EXPECT_LE(worst, 2.0 * unit * double(kK)) << ta << tb;
      EXPECT_GT(worst, 0.0) << "rounding changed nothing: not a 2-byte product";
    }
  }
}

TEST(GemmPrecision, Bf16IsGemmHalfOnRoundedOperands) { expect_rounded_gemm(Precision::bf16, std::ldexp(1.0, -8)); }
TEST(GemmPrecision, Fp16IsGemmHalfOnRoundedOperands) { expect_rounded_gemm(Precision::fp16, std::ldexp(1.0, -11)); }

TEST(GemmPrecision, Fp8IsRefused) {
  float a = 1, b = 1, c = 0;
  EXPECT_THROW(gemm(Precision::fp8, false, false, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1), std::invalid_argument);
}

}  // namespace
}  // namespace axo::cpu
