// The CUDA backend's matrix multiply through cuBLAS, row-major like
// cpu::gemm: C[M,N] = A[M,K]·B[K,N] on device buffers, in fp32, or in
// bf16/fp16 with fp32 accumulation (tensor cores).
#pragma once

#include <cstdint>

#include "model/transformer_spec.h"

namespace axo::cuda {

class CublasGemm {
 public:
  CublasGemm();
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // a, b, c point to device memory holding elements of `precision`.
  void gemm(Precision precision, int64_t m, int64_t n, int64_t k, const void* a, const void* b, void* c);

 private:
  void* handle_ = nullptr;  // cublasHandle_t
};

}  // namespace axo::cuda
