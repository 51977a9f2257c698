// Parameter and gradient views in fp32 or a 2-byte format (see shard_view.h).
#include "executor/parallel/shard_view.h"

#include <algorithm>

#include "executor/cpu/gemm_precision.h"

namespace axo {

void widen(ShardView view, float* out, int64_t n) {
  if (view.f32) {
    std::copy_n(view.f32, n, out);
  } else {
    cpu::to_float(view.half, out, n, view.format);
  }
}

void add_to(ShardGrad grad, const float* values, int64_t n) {
  if (grad.f32) {
    for (int64_t i = 0; i < n; ++i) grad.f32[i] += values[i];
    return;
  }
  // In blocks: widened, added in fp32, rounded back.
  constexpr int64_t kBlock = 256;
  float sums[kBlock];
  for (int64_t at = 0; at < n; at += kBlock) {
    const int64_t count = std::min(kBlock, n - at);
    cpu::to_float(grad.half + at, sums, count, grad.format);
    for (int64_t i = 0; i < count; ++i) sums[i] += values[at + i];
    cpu::to_half(sums, grad.half + at, count, grad.format);
  }
}

void gemm_weights(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                  const float* a, int64_t lda, ShardView b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (b.f32) return cpu::gemm(precision, transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b.f32, ldb, beta, c, ldc);
  cpu::gemm_mixed(b.format, transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b.half, ldb, beta, c, ldc);
}

void gemm_gradient(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                   const float* a, int64_t lda, const float* b, int64_t ldb, ShardGrad c, int64_t ldc) {
  if (c.f32) return cpu::gemm(precision, transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c.f32, ldc);
  cpu::gemm_mixed(c.format, transpose_a, transpose_b, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c.half, ldc);
}

}  // namespace axo
