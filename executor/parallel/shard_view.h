// A rank's shard of a parameter tensor, or of its gradient, in the storage
// the run keeps it in: fp32, or 2-byte (bf16 or fp16: cpu/half.h) under
// mixed precision (2 bytes per element on the device; the fp32 master
// weights live with the optimizer, parallel_gpt.h). Exactly one pointer is
// set; a 2-byte view carries its format. The layers read and write through
// these views: GEMMs take 2-byte weights as they are and accumulate 2-byte
// gradients in fp32 inside the GEMM (cpu/gemm_precision.h); small tensors
// (biases, norms' weights) are widened to fp32 to compute with, and their
// gradients are added back rounded to nearest even.
#pragma once

#include <cstdint>

#include "executor/cpu/half.h"
#include "model/transformer_spec.h"

namespace axo {

struct ShardView {
  const float* f32 = nullptr;
  const cpu::Half* half = nullptr;
  cpu::HalfFormat format = cpu::HalfFormat::bf16;  // half's
  ShardView() = default;
  ShardView(const float* p) : f32(p) {}  // NOLINT: an fp32 buffer is a view
  ShardView(const cpu::Half* p, cpu::HalfFormat f) : half(p), format(f) {}
  explicit operator bool() const { return f32 || half; }
  ShardView operator+(int64_t offset) const { return f32 ? ShardView(f32 + offset) : ShardView(half + offset, format); }
};

struct ShardGrad {
  float* f32 = nullptr;
  cpu::Half* half = nullptr;
  cpu::HalfFormat format = cpu::HalfFormat::bf16;  // half's
  ShardGrad() = default;
  ShardGrad(float* p) : f32(p) {}  // NOLINT
  ShardGrad(cpu::Half* p, cpu::HalfFormat f) : half(p), format(f) {}
  explicit operator bool() const { return f32 || half; }
  ShardGrad operator+(int64_t offset) const { return f32 ? ShardGrad(f32 + offset) : ShardGrad(half + offset, format); }
};

// out[i] = view[i] in fp32 (exact), i < n.
void widen(ShardView view, float* out, int64_t n);
// grad[i] += values[i]: in fp32, or in fp32 and rounded to nearest even into the 2-byte format.
void add_to(ShardGrad grad, const float* values, int64_t n);

// C[m,n] = alpha·op(A)·op(B) + beta·C (gemm.h's layout) with B a weight view:
// fp32 B at `precision`, 2-byte B as it is (A rounded to its format; fp32 accumulation).
void gemm_weights(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                  const float* a, int64_t lda, ShardView b, int64_t ldb, float beta, float* c, int64_t ldc);
// grad[m,n] += op(A)·op(B) (alpha 1, beta 1) at `precision`: into fp32, or
// into a 2-byte gradient with A and B rounded to its format, accumulated in
// fp32 with the old gradient and rounded once.
void gemm_gradient(Precision precision, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                   const float* a, int64_t lda, const float* b, int64_t ldb, ShardGrad c, int64_t ldc);

}  // namespace axo
