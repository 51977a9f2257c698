// CPU GEMM through OpenBLAS or oneDNN (see gemm.h).
#include "executor/cpu/gemm.h"

#include <cblas.h>

#include <vector>

#include "executor/cpu/onednn_matmul.h"

namespace axo::cpu {

namespace {

// fp32 stays on OpenBLAS: oneDNN 2.6's fp32 matmul (brg:avx512_core) was no
// faster on GPT-2 124M-shaped layers (0.97-1.03x, within the runs' spread of
// 0.95-1.15x), and OpenBLAS is what every fp32 result so far ran on.
// bench/gemm_bench, 2 threads, 2026-11-23, the machine shared (load 7-11 on
// 2 cores; issue 18 quotes ~200 OpenBLAS, ~440 bf16 when idle), medians over
// runs (7 at 1024 tokens, 4 at 8192) of one block's fwd+dX+dW GEMMs, GFLOP/s:
//   tokens  OpenBLAS f32  oneDNN f32  oneDNN bf16  dnnl/blas  bf16/f32
//   1024        32.9          34.5        64.9        1.03       1.97
//   8192        47.3          46.7        94.2        0.97       1.99
constexpr GemmBackend kFp32Backend = GemmBackend::openblas;

MatmulCall matmul_call(MatmulType ab, MatmulType c_type, bool transpose_a, bool transpose_b, int64_t m, int64_t n,
                       int64_t k, float alpha, const void* a, int64_t lda, const void* b, int64_t ldb, float beta,
                       void* c, int64_t ldc) {
  return {ab, c_type, transpose_a, transpose_b, m, n, k, alpha, beta, a, lda, b, ldb, c, ldc};
}

// `rows` rows of `cols` fp16 values `ld` apart, widened (exactly) into `out` (grown as needed, reused).
float* widened(const Half* in, int64_t rows, int64_t cols, int64_t ld, std::vector<float>& out) {
  const int64_t n = rows > 0 ? (rows - 1) * ld + cols : 0;
  if (int64_t(out.size()) < n) out.resize(size_t(n));
  to_float(in, out.data(), n, HalfFormat::fp16);
  return out.data();
}

// fp16 operands on the fp32 GEMM: oneDNN 2.6.3 has no f16 matmul on this
// processor (AVX512-BF16 but no AVX512-FP16 or AMX: creating one fails with
// "could not create a primitive descriptor iterator"), so A and B are widened
// to fp32, exactly, and multiplied at fp32 with fp32 accumulation: the
// products of fp16 values are exact in fp32 (11 + 11 significant bits), as in
// a tensor core's fp16 MMA. A is stored [m, lda] (or [k, lda] transposed), B [k, ldb] (or [n, ldb]).
// The widening costs little beside the product: [1024,768]·[768,3072], 2
// threads, 2026-11-23 (the machine shared, load 12 on 2 cores), five rounds
// of 3 calls: fp16 at 0.82-1.15x the fp32 GEMM's rate (30-37 GFLOP/s), bf16 at 50-66.
void gemm_fp16_widened(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                       const Half* a, int64_t lda, const Half* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  thread_local std::vector<float> a32, b32;
  const float* wide_a = widened(a, transpose_a ? k : m, transpose_a ? m : k, lda, a32);
  const float* wide_b = widened(b, transpose_b ? n : k, transpose_b ? k : n, ldb, b32);
  gemm(kFp32Backend, transpose_a, transpose_b, m, n, k, alpha, wide_a, lda, wide_b, ldb, beta, c, ldc);
}

}  // namespace

const char* to_string(GemmBackend backend) { return backend == GemmBackend::openblas ? "OpenBLAS" : "oneDNN"; }

GemmBackend fp32_gemm_backend() { return kFp32Backend; }

void gemm(GemmBackend backend, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (backend == GemmBackend::onednn) {
    return onednn_matmul(matmul_call(MatmulType::f32, MatmulType::f32, transpose_a, transpose_b, m, n, k, alpha, a,
                                     lda, b, ldb, beta, c, ldc));
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), alpha, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
}

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  gemm(kFp32Backend, transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_half(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const Half* a, int64_t lda, const Half* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (format == HalfFormat::fp16) {
    return gemm_fp16_widened(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  onednn_matmul(matmul_call(MatmulType::bf16, MatmulType::f32, transpose_a, transpose_b, m, n, k, alpha, a, lda, b,
                            ldb, beta, c, ldc));
}

void gemm_half(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const Half* a, int64_t lda, const Half* b, int64_t ldb, float beta, Half* c, int64_t ldc) {
  if (format == HalfFormat::bf16) {
    return onednn_matmul(matmul_call(MatmulType::bf16, MatmulType::bf16, transpose_a, transpose_b, m, n, k, alpha, a,
                                     lda, b, ldb, beta, c, ldc));
  }
  // C [m, ldc] widened (beta·C is read from it), computed in fp32, rounded once.
  thread_local std::vector<float> c32;
  float* wide_c = widened(c, m, n, ldc, c32);
  gemm_fp16_widened(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, wide_c, ldc);
  for (int64_t i = 0; i < m; ++i) to_half(wide_c + i * ldc, c + i * ldc, n, HalfFormat::fp16);
}

void set_gemm_threads(int threads) {
  openblas_set_num_threads(threads);
  set_onednn_threads(threads);
}
int gemm_threads() { return openblas_get_num_threads(); }

}  // namespace axo::cpu
