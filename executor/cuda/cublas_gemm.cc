// cuBLAS GEMM, row-major (see cublas_gemm.h).
#include "executor/cuda/cublas_gemm.h"

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace axo::cuda {

namespace {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS: ") + what + " failed (status " + std::to_string(int(status)) + ")");
  }
}

}  // namespace

CublasGemm::CublasGemm() {
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  handle_ = handle;
}

CublasGemm::~CublasGemm() { cublasDestroy(static_cast<cublasHandle_t>(handle_)); }

void CublasGemm::gemm(Precision precision, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                      void* c) {
  // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands.
  const float one = 1.0f, zero = 0.0f;
  // fp8 GEMMs need per-tensor scales (cublasLt), which this GEMM does not take: refused, never run as fp16.
  if (precision == Precision::fp8) throw std::invalid_argument("CublasGemm::gemm: fp8 is not supported (bf16 is)");
  const cudaDataType type = precision == Precision::fp32   ? CUDA_R_32F
                            : precision == Precision::bf16 ? CUDA_R_16BF
                                                           : CUDA_R_16F;  // fp16
  check_cublas(cublasGemmEx(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m),
                            int(k), &one, b, type, int(n), a, type, int(k), &zero, c, type, int(n),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace axo::cuda
