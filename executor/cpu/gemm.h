// The CPU backend's matrix multiply: every GEMM the executor runs on CPU and
// every GEMM `axo calibrate` measures on CPU goes through here.
//
// Row-major, as llm.c: C[M,N] = alpha · op(A)[M,K] · op(B)[K,N] + beta · C,
// where op(A) is A ([M,K], lda ≥ K) or Aᵀ (A stored [K,M], lda ≥ M), and
// likewise for B. fp32 runs on the faster of OpenBLAS's cblas_sgemm and
// oneDNN's fp32 matmul on this machine (gemm.cc says which, and why); 2-byte
// operands (half.h) accumulate in fp32: bf16 on oneDNN's bf16 matmul
// (Debian's OpenBLAS has no sbgemm), fp16 widened exactly to fp32 and run
// on the fp32 GEMM (oneDNN 2.6 has no f16 matmul without AVX512-FP16 or AMX:
// gemm.cc).
#pragma once

#include <cstdint>

#include "executor/cpu/half.h"

namespace axo::cpu {

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);

// A and B in a 2-byte format, fp32 accumulation; C in fp32 or (beta·C read
// from it, the result rounded once to nearest even) in A's and B's format.
void gemm_half(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const Half* a, int64_t lda, const Half* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm_half(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const Half* a, int64_t lda, const Half* b, int64_t ldb, float beta, Half* c, int64_t ldc);

// The fp32 candidates, each callable on its own (for gemm_bench and the tests).
enum class GemmBackend { openblas, onednn };
const char* to_string(GemmBackend backend);
// The one gemm() uses.
GemmBackend fp32_gemm_backend();
void gemm(GemmBackend backend, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
          float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc);

// Threads each GEMM uses, both libraries alike (OpenBLAS's and oneDNN's OpenMP settings).
void set_gemm_threads(int threads);
int gemm_threads();

}  // namespace axo::cpu
