// The CPU backend's matrix multiply: every GEMM the executor runs on CPU and
// every GEMM `axo calibrate` measures on CPU goes through here.
//
// Row-major, as llm.c: C[M,N] = alpha · op(A)[M,K] · op(B)[K,N] + beta · C,
// where op(A) is A ([M,K], lda ≥ K) or Aᵀ (A stored [K,M], lda ≥ M), and
// likewise for B. Backed by OpenBLAS's cblas_sgemm, threaded by OpenBLAS.
#pragma once

#include <cstdint>

namespace axo::cpu {

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);

// Threads the BLAS uses (OpenBLAS's own setting).
void set_gemm_threads(int threads);
int gemm_threads();

}  // namespace axo::cpu
