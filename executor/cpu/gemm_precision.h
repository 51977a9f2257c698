// The CPU backend's GEMM at a training precision, for layers that keep fp32
// buffers: fp32 runs gemm() (gemm.h) unchanged; bf16 and fp16 round A and B
// to the 2-byte format (to nearest, ties to even: half.h) and run gemm_half,
// which accumulates in fp32 and writes C in fp32, as mixed-precision
// training does on a GPU (2-byte operands, fp32 accumulation; Micikevicius
// et al. 2018).
#pragma once

#include <cstdint>

#include "executor/cpu/gemm.h"
#include "model/transformer_spec.h"

namespace axo::cpu {

// gemm()'s arguments (row-major, see gemm.h), at `precision` (fp32, bf16 or
// fp16; std::invalid_argument for fp8, which this backend's GEMMs do not run).
void gemm(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// 2-byte GEMMs on mixed storage (fp32 accumulation; fp32 operands rounded to `format` on the way in):
// weights B in `format` with fp32 activations A, into fp32 C;
void gemm_mixed(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const Half* b, int64_t ldb, float beta, float* c, int64_t ldc);
// fp32 A and B into C in `format` (beta·C read from it, the result rounded once): 2-byte gradients.
void gemm_mixed(HalfFormat format, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
                const float* a, int64_t lda, const float* b, int64_t ldb, float beta, Half* c, int64_t ldc);

}  // namespace axo::cpu
