// GEMMs at a training precision: fp32 is gemm() bit for bit; bf16 is
// gemm_bf16 on the operands rounded to nearest even, bit for bit, and stays
// within bf16's round-off of the fp32 product.
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

std::vector<bfloat16> rounded(const std::vector<float>& v) {
  std::vector<bfloat16> r(v.size());
  to_bfloat16(v.data(), r.data(), int64_t(v.size()));
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

TEST(GemmPrecision, Bf16IsGemmBf16OnRoundedOperands) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = random_values(size_t(kM * kK), 4), b = random_values(size_t(kK * kN), 5);
      const int64_t lda = ta ? kM : kK, ldb = tb ? kK : kN;
      std::vector<float> c = random_values(size_t(kM * kN), 6), expected = c, exact = c;
      gemm(Precision::bf16, ta, tb, kM, kN, kK, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, c.data(), kN);
      const auto a16 = rounded(a), b16 = rounded(b);
      gemm_bf16(ta, tb, kM, kN, kK, 1.0f, a16.data(), lda, b16.data(), ldb, 1.0f, expected.data(), kN);
      EXPECT_EQ(c, expected) << ta << tb;
      // Against fp32: each product term carries two roundings of 2⁻⁸ at most; |terms| ≤ 1, K of them.
      gemm(ta, tb, kM, kN, kK, 1.0f, a.data(), lda, b.data(), ldb, 1.0f, exact.data(), kN);
      double worst = 0;
      for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, double(std::fabs(c[i] - exact[i])));
      EXPECT_LE(worst, 2.0 * std::ldexp(1.0, -8) * double(kK)) << ta << tb;
      EXPECT_GT(worst, 0.0) << "bf16 rounding changed nothing: not a bf16 product";
    }
  }
}

TEST(GemmPrecision, Fp16IsRefused) {
  float a = 1, b = 1, c = 0;
  EXPECT_THROW(gemm(Precision::fp16, false, false, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1), std::invalid_argument);
}

}  // namespace
}  // namespace axo::cpu
