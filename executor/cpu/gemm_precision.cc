// GEMMs at a training precision (see gemm_precision.h).
#include "executor/cpu/gemm_precision.h"

#include <stdexcept>
#include <vector>

namespace axo::cpu {

namespace {

// `rows` rows of `cols` elements `ld` apart, rounded to `format` into `out` (grown as needed, reused between calls).
const Half* rounded(const float* in, int64_t rows, int64_t cols, int64_t ld, HalfFormat format,
                    std::vector<Half>& out) {
  const int64_t n = rows > 0 ? (rows - 1) * ld + cols : 0;
  if (int64_t(out.size()) < n) out.resize(size_t(n));
  to_half(in, out.data(), n, format);
  return out.data();
}

}  // namespace

void gemm(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (precision == Precision::fp32) return gemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (precision == Precision::fp8) {
    throw std::invalid_argument("cpu::gemm: the CPU backend runs fp32, bf16 and fp16 GEMMs");
  }
  const HalfFormat format = half_format(precision);
  // The operands' rounded copies: A is stored [m, lda] (or [k, lda] transposed), B [k, ldb] (or [n, ldb]).
  thread_local std::vector<Half> a16, b16;
  const Half* a_rounded = rounded(a, transpose_a ? k : m, transpose_a ? m : k, lda, format, a16);
  const Half* b_rounded = rounded(b, transpose_b ? n : k, transpose_b ? k : n, ldb, format, b16);
  gemm_half(format, transpose_a, transpose_b, m, n, k, alpha, a_rounded, lda, b_rounded, ldb, beta, c, ldc);
}

void gemm_mixed(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const Half* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  thread_local std::vector<Half> a16;
  const Half* a_rounded = rounded(a, transpose_a ? k : m, transpose_a ? m : k, lda, format, a16);
  gemm_half(format, transpose_a, transpose_b, m, n, k, alpha, a_rounded, lda, b, ldb, beta, c, ldc);
}

void gemm_mixed(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, Half* c, int64_t ldc) {
  thread_local std::vector<Half> a16, b16;
  const Half* a_rounded = rounded(a, transpose_a ? k : m, transpose_a ? m : k, lda, format, a16);
  const Half* b_rounded = rounded(b, transpose_b ? n : k, transpose_b ? k : n, ldb, format, b16);
  gemm_half(format, transpose_a, transpose_b, m, n, k, alpha, a_rounded, lda, b_rounded, ldb, beta, c, ldc);
}

}  // namespace axo::cpu
