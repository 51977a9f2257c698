// oneDNN's matmul primitive behind cpu::gemm's row-major interface (see
// gemm.h): C[M,N] = alpha · op(A) · op(B) + beta · C with fp32 accumulation.
// Transposes and leading dimensions become strides of oneDNN memory
// descriptors. One primitive per distinct call (types, transposes, shape,
// leading dimensions, alpha, beta) is created on first use and cached; the
// cache is shared by all threads. Callers: gemm.cc only.
#pragma once

#include <cstdint>
#include <string>

namespace axo::cpu {

enum class MatmulType { f32, bf16 };

struct MatmulCall {
  MatmulType ab_type = MatmulType::f32;  // A and B
  MatmulType c_type = MatmulType::f32;
  bool transpose_a = false, transpose_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1, beta = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;
};

void onednn_matmul(const MatmulCall& call);

// The oneDNN implementation chosen for this call's shape (e.g.
// "brg:avx512_core_bf16"), for benchmarks; creates and caches the primitive.
std::string onednn_matmul_implementation(const MatmulCall& call);

// "2.6.3": the oneDNN library this process runs (for profiles' metadata).
std::string onednn_version();

// The threads each oneDNN call uses (its OpenMP runtime's, for the calling thread).
void set_onednn_threads(int threads);

}  // namespace axo::cpu
