// A rank's shard of a parameter tensor, or of its gradient, in the storage
// the run keeps it in: fp32, or bf16 under mixed precision (2 bytes per
// element on the device; the fp32 master weights live with the optimizer,
// parallel_gpt.h). Exactly one pointer is set. The layers read and write
// through these views: GEMMs take bf16 weights as they are and accumulate
// bf16 gradients in fp32 inside the GEMM (cpu/gemm_precision.h); small
// tensors (biases, norms' weights) are widened to fp32 to compute with, and
// their gradients are added back rounded to nearest even.
#pragma once

#include <cstdint>

#include "executor/cpu/bf16.h"
#include "model/transformer_spec.h"

namespace axo {

struct ShardView {
  const float* f32 = nullptr;
  const cpu::bfloat16* bf16 = nullptr;
  ShardView() = default;
  ShardView(const float* p) : f32(p) {}  // NOLINT: an fp32 buffer is a view
  ShardView(const cpu::bfloat16* p) : bf16(p) {}  // NOLINT
  explicit operator bool() const { return f32 || bf16; }
  ShardView operator+(int64_t offset) const { return f32 ? ShardView(f32 + offset) : ShardView(bf16 + offset); }
};

struct ShardGrad {
  float* f32 = nullptr;
  cpu::bfloat16* bf16 = nullptr;
  ShardGrad() = default;
  ShardGrad(float* p) : f32(p) {}  // NOLINT
  ShardGrad(cpu::bfloat16* p) : bf16(p) {}  // NOLINT
  explicit operator bool() const { return f32 || bf16; }
  ShardGrad operator+(int64_t offset) const { return f32 ? ShardGrad(f32 + offset) : ShardGrad(bf16 + offset); }
};

// out[i] = view[i] in fp32 (exact), i < n.
void widen(ShardView view, float* out, int64_t n);
// grad[i] += values[i]: in fp32, or in fp32 and rounded to nearest even into bf16.
void add_to(ShardGrad grad, const float* values, int64_t n);

// C[m,n] = alpha·op(A)·op(B) + beta·C (gemm.h's layout) with B a weight view:
// fp32 B at `precision`, bf16 B as it is (A rounded to bf16; fp32 accumulation).
void gemm_weights(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                  const float* a, int64_t lda, ShardView b, int64_t ldb, float beta, float* c, int64_t ldc);
// grad[m,n] += op(A)·op(B) (alpha 1, beta 1) at `precision`: into fp32, or
// into bf16 with A and B rounded to bf16, accumulated in fp32 with the old
// gradient and rounded once.
void gemm_gradient(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                   const float* a, int64_t lda, const float* b, int64_t ldb, ShardGrad c, int64_t ldc);

}  // namespace axo
