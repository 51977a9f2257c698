// CPU GEMM through OpenBLAS or oneDNN (see gemm.h).
#include "executor/cpu/gemm.h"

#include <cblas.h>

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

void gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const bfloat16* a, int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  onednn_matmul(matmul_call(MatmulType::bf16, MatmulType::f32, transpose_a, transpose_b, m, n, k, alpha, a, lda, b,
                            ldb, beta, c, ldc));
}

void gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const bfloat16* a, int64_t lda, const bfloat16* b, int64_t ldb, float beta, bfloat16* c,
               int64_t ldc) {
  onednn_matmul(matmul_call(MatmulType::bf16, MatmulType::bf16, transpose_a, transpose_b, m, n, k, alpha, a, lda, b,
                            ldb, beta, c, ldc));
}

void set_gemm_threads(int threads) {
  openblas_set_num_threads(threads);
  set_onednn_threads(threads);
}
int gemm_threads() { return openblas_get_num_threads(); }

}  // namespace axo::cpu
