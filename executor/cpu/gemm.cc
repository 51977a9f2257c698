// CPU GEMM through OpenBLAS (see gemm.h).
#include "executor/cpu/gemm.h"

#include <cblas.h>

namespace axo::cpu {

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, int(m), int(n), int(k), alpha, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
}

void set_gemm_threads(int threads) { openblas_set_num_threads(threads); }
int gemm_threads() { return openblas_get_num_threads(); }

}  // namespace axo::cpu
