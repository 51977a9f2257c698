// cpu::gemm and cpu::gemm_half (bf16, fp16) against a double-precision reference, on every
// transpose combination, packed and padded leading dimensions (C's padding
// must stay untouched) and several alpha, beta.
//
// Tolerances, per element, relative to its magnitude
//   |C|ₘₐₓ = |alpha|·Σₚ |op(A)ᵢₚ|·|op(B)ₚⱼ| + |beta|·|C₀ᵢⱼ|:
// - fp32 (both backends): 1e-5, above fp32 accumulation's k·2⁻²⁴ ≤ 3e-6 for k ≤ 45
//   and its ~√k·2⁻²⁴ typical case for the larger k (sums of random-sign terms).
// - 2-byte operands, fp32 result, against the reference on the same (rounded)
//   operands: 1e-5 as fp32, since products of two 8-bit (bf16) or 11-bit (fp16)
//   significands are exact in fp32.
// - 2-byte result: that, plus the result's own rounding, u·|C| with the
//   format's unit roundoff u (2⁻⁸ for bf16's 8 significant bits, 2⁻¹¹ for fp16's 11).
// - against the reference on the unrounded fp32 operands: each operand is
//   within u relative, each product within (1+u)² − 1 < 2u·1.01, so 2u·1.01·|C|ₘₐₓ + 1e-5.
#include "executor/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "tests/executor/random_values.h"

namespace axo::cpu {
namespace {

using testing::random_values;

constexpr float kPadding = 12288.0f;  // C's entries between n and ldc: must stay (3·2¹², exact in bf16)
constexpr double kFp32Tolerance = 1e-5;
// The unit roundoff of a 2-byte format: 2⁻⁸ (bf16), 2⁻¹¹ (fp16).
double unit_roundoff(HalfFormat format) { return format == HalfFormat::bf16 ? 1.0 / 256 : 1.0 / 2048; }

struct Case {
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t pad = 0;  // added to each leading dimension
  float alpha = 1, beta = 0;
  std::string name() const {
    return std::string(ta ? "T" : "N") + (tb ? "T" : "N") + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
           std::to_string(k) + " pad " + std::to_string(pad) + " alpha " + std::to_string(alpha) + " beta " +
           std::to_string(beta);
  }
};

// Operands as stored: A is [m,k] (or [k,m] when transposed) with leading dimension lda; likewise B, C.
struct Operands {
  int64_t lda, ldb, ldc;
  std::vector<float> a, b, c0;
};

Operands make_operands(const Case& t, uint32_t seed) {
  Operands o;
  o.lda = (t.ta ? t.m : t.k) + t.pad;
  o.ldb = (t.tb ? t.k : t.n) + t.pad;
  o.ldc = t.n + t.pad;
  o.a = random_values(size_t((t.ta ? t.k : t.m) * o.lda), seed);
  o.b = random_values(size_t((t.tb ? t.n : t.k) * o.ldb), seed + 1);
  o.c0 = random_values(size_t(t.m * o.ldc), seed + 2);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = t.n; j < o.ldc; ++j) o.c0[size_t(i * o.ldc + j)] = kPadding;
  return o;
}

std::vector<float> rounded_to(const std::vector<float>& v, HalfFormat format) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = to_float(to_half(v[i], format), format);
  return r;
}

std::vector<Half> as_half(const std::vector<float>& v, HalfFormat format) {
  std::vector<Half> r(v.size());
  to_half(v.data(), r.data(), int64_t(v.size()), format);
  return r;
}

// Checks every C element against the double reference on operands `o`, within
// relative·|C|ₘₐₓ + value_relative·|reference|; and C's padding is untouched.
void expect_matches(const Case& t, const Operands& o, const std::vector<float>& c, double relative,
                    double value_relative, const std::string& what) {
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < o.ldc; ++j) {
      const float got = c[size_t(i * o.ldc + j)];
      if (j >= t.n) {
        ASSERT_EQ(got, kPadding) << what << " " << t.name() << ": padding at " << i << "," << j;
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < t.k; ++p) {
        const double a = o.a[size_t(t.ta ? p * o.lda + i : i * o.lda + p)];
        const double b = o.b[size_t(t.tb ? j * o.ldb + p : p * o.ldb + j)];
        sum += a * b;
        magnitude += std::fabs(a * b);
      }
      const double c0 = o.c0[size_t(i * o.ldc + j)];
      const double want = double(t.alpha) * sum + double(t.beta) * c0;
      magnitude = std::fabs(t.alpha) * magnitude + std::fabs(t.beta) * std::fabs(c0);
      ASSERT_NEAR(got, want, relative * magnitude + value_relative * std::fabs(want))
          << what << " " << t.name() << " at " << i << "," << j;
    }
  }
}

std::vector<Case> small_cases() {
  std::vector<Case> cases;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t pad : {0, 3})
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {1.0f, 1.0f}, {-1.5f, 0.25f}}) {
          cases.push_back({ta, tb, 23, 17, 45, pad, alpha, beta});
        }
  return cases;
}

// Shapes large enough for the libraries' blocked kernels, in the executor's
// three uses (forward NT, dX NN, dW TN with beta 1) and TT.
std::vector<Case> large_cases() {
  return {{false, true, 96, 160, 256, 0, 1, 0},
          {false, false, 96, 256, 160, 0, 1, 0},
          {true, false, 160, 256, 96, 0, 1, 1},
          {true, true, 96, 160, 256, 8, 1, 0}};
}

void check_fp32(GemmBackend backend, const Case& t, uint32_t seed) {
  const Operands o = make_operands(t, seed);
  std::vector<float> c = o.c0;
  gemm(backend, t.ta, t.tb, t.m, t.n, t.k, t.alpha, o.a.data(), o.lda, o.b.data(), o.ldb, t.beta, c.data(), o.ldc);
  expect_matches(t, o, c, kFp32Tolerance, 0, to_string(backend));
}

TEST(Gemm, Fp32BothBackendsEveryTransposeLeadingDimensionAlphaBeta) {
  uint32_t seed = 1;
  for (GemmBackend backend : {GemmBackend::openblas, GemmBackend::onednn}) {
    for (const Case& t : small_cases()) check_fp32(backend, t, seed += 3);
    for (const Case& t : large_cases()) check_fp32(backend, t, seed += 3);
  }
}

TEST(Gemm, DefaultFp32IsTheChosenBackend) {
  const Case t{false, true, 9, 7, 5, 1, 1, 0};
  const Operands o = make_operands(t, 7);
  std::vector<float> via_default = o.c0, via_backend = o.c0;
  gemm(t.ta, t.tb, t.m, t.n, t.k, 1, o.a.data(), o.lda, o.b.data(), o.ldb, 0, via_default.data(), o.ldc);
  gemm(fp32_gemm_backend(), t.ta, t.tb, t.m, t.n, t.k, 1, o.a.data(), o.lda, o.b.data(), o.ldb, 0,
       via_backend.data(), o.ldc);
  EXPECT_EQ(via_default, via_backend);
  expect_matches(t, o, via_default, kFp32Tolerance, 0, "default");
}

// Operands rounded to the format first: the reference then sees what the GEMM sees.
Operands half_operands(const Case& t, uint32_t seed, HalfFormat format, bool half_c) {
  Operands o = make_operands(t, seed);
  o.a = rounded_to(o.a, format);
  o.b = rounded_to(o.b, format);
  if (half_c) o.c0 = rounded_to(o.c0, format);  // kPadding is exact in bf16 and fp16
  return o;
}

void check_half(HalfFormat format, const Case& t, uint32_t seed) {
  const std::string name = to_string(format);
  const Operands o = half_operands(t, seed, format, false);
  const auto a = as_half(o.a, format), b = as_half(o.b, format);
  std::vector<float> c = o.c0;
  gemm_half(format, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), o.lda, b.data(), o.ldb, t.beta, c.data(), o.ldc);
  expect_matches(t, o, c, kFp32Tolerance, 0, name + " -> fp32");

  const Operands oh = half_operands(t, seed, format, true);
  std::vector<Half> ch = as_half(oh.c0, format);
  gemm_half(format, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), o.lda, b.data(), o.ldb, t.beta, ch.data(), o.ldc);
  std::vector<float> widened(ch.size());
  to_float(ch.data(), widened.data(), int64_t(ch.size()), format);
  expect_matches(t, oh, widened, kFp32Tolerance, unit_roundoff(format), name + " -> " + name);
}

TEST(Gemm, HalfEveryTransposeLeadingDimensionAlphaBeta) {
  for (HalfFormat format : {HalfFormat::bf16, HalfFormat::fp16}) {
    uint32_t seed = 100;
    for (const Case& t : small_cases()) check_half(format, t, seed += 3);
    for (const Case& t : large_cases()) check_half(format, t, seed += 3);
  }
}

TEST(Gemm, HalfAgainstTheUnroundedFp32Product) {
  for (HalfFormat format : {HalfFormat::bf16, HalfFormat::fp16}) {
    for (const Case& t : large_cases()) {
      const Operands o = make_operands(t, 300);
      const auto a = as_half(o.a, format), b = as_half(o.b, format);
      std::vector<float> c = o.c0;
      gemm_half(format, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), o.lda, b.data(), o.ldb, t.beta, c.data(),
                o.ldc);
      expect_matches(t, o, c, 2 * unit_roundoff(format) * 1.01 + kFp32Tolerance, 0,
                     std::string(to_string(format)) + " vs fp32 operands");
    }
  }
}

TEST(Gemm, EmptyInnerDimensionScalesC) {
  const Case t{false, false, 4, 5, 0, 0, 1, 0.5f};
  for (GemmBackend backend : {GemmBackend::openblas, GemmBackend::onednn}) {
    const Operands o = make_operands(t, 9);
    std::vector<float> c = o.c0;
    gemm(backend, false, false, t.m, t.n, 0, 1, o.a.data(), 1, o.b.data(), t.n, 0.5f, c.data(), t.n);
    for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], 0.5f * o.c0[i]) << to_string(backend);
  }
}

// Threads sharing the primitive cache, on the same and on different shapes,
// get what one thread alone gets.
TEST(Gemm, ConcurrentCallsMatchSerialOnes) {
  const std::vector<Case> cases = large_cases();
  std::vector<Operands> operands;
  std::vector<std::vector<float>> serial;
  for (size_t i = 0; i < cases.size(); ++i) {
    operands.push_back(half_operands(cases[i], 500 + uint32_t(i), HalfFormat::bf16, false));
  }
  auto run = [&](size_t i, std::vector<float>& c) {
    const Case& t = cases[i];
    const auto a = as_half(operands[i].a, HalfFormat::bf16), b = as_half(operands[i].b, HalfFormat::bf16);
    c = operands[i].c0;
    gemm_half(HalfFormat::bf16, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), operands[i].lda, b.data(),
              operands[i].ldb, t.beta,
              c.data(), operands[i].ldc);
  };
  serial.resize(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) run(i, serial[i]);
  std::vector<std::vector<float>> results(2 * cases.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) threads.emplace_back([&, i] { run(i % cases.size(), results[i]); });
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i], serial[i % cases.size()]) << cases[i % cases.size()].name();
  }
}

}  // namespace
}  // namespace axo::cpu
