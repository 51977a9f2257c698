// The CPU backend's GEMM at a training precision, for layers that keep fp32
// buffers: fp32 runs gemm() (gemm.h) unchanged; bf16 rounds A and B to
// bfloat16 (to nearest, ties to even: bf16.h) and runs gemm_bf16, which
// accumulates in fp32 and writes C in fp32, as mixed-precision training
// does on a GPU (bf16 operands, fp32 accumulation; Micikevicius et al. 2018).
#pragma once

#include <cstdint>

#include "executor/cpu/gemm.h"
#include "model/transformer_spec.h"

namespace axo::cpu {

// gemm()'s arguments (row-major, see gemm.h), at `precision` (fp32 or bf16;
// std::invalid_argument for fp16, which this backend's GEMMs do not run).
void gemm(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// bf16 GEMMs on mixed storage (fp32 accumulation; fp32 operands rounded to bf16 on the way in):
// bf16 weights B with fp32 activations A, into fp32 C;
void gemm_mixed(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc);
// fp32 A and B into a bf16 C (beta·C read from bf16, the result rounded once): bf16 gradients.
void gemm_mixed(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, bfloat16* c, int64_t ldc);

}  // namespace axo::cpu
