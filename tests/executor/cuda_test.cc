// The CUDA backend against the CPU one: cuBLAS GEMM and NCCL collectives.
// Skips, and says so, where no GPU is visible (CI has none).
// axo-test-ranks: 1
// axo-test-needs: cuda
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "executor/cpu/gemm.h"
#include "executor/cuda/cublas_gemm.h"
#include "executor/cuda/device.h"
#include "executor/cuda/nccl_communicator.h"

namespace axo {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (cuda::device_count() == 0) GTEST_SKIP() << "no GPU visible: CUDA tests skipped"

TEST(Cuda, CublasGemmMatchesCpu) {
  SKIP_WITHOUT_GPU();
  cuda::select_device(0);
  const int64_t m = 64, n = 48, k = 80;
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), expected(size_t(m * n)), got(size_t(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) - 2;
  cpu::gemm(false, false, m, n, k, 1, a.data(), k, b.data(), n, 0, expected.data(), n);
  float* da = cuda::device_alloc(a.size());
  float* db = cuda::device_alloc(b.size());
  float* dc = cuda::device_alloc(got.size());
  cuda::copy_to_device(da, a.data(), a.size());
  cuda::copy_to_device(db, b.data(), b.size());
  cuda::CublasGemm blas;
  blas.gemm(Precision::fp32, m, n, k, da, db, dc);
  cuda::copy_to_host(got.data(), dc, got.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-3f) << i;
  cuda::device_free(da), cuda::device_free(db), cuda::device_free(dc);
}

TEST(Cuda, NcclCollectivesOnDeviceBuffers) {
  SKIP_WITHOUT_GPU();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  cuda::select_device(rank);
  cuda::NcclCommunicator nccl(MPI_COMM_WORLD);
  const size_t count = 1000;
  std::vector<float> host(count, float(rank + 1));
  float* data = cuda::device_alloc(count);
  cuda::copy_to_device(data, host.data(), count);
  nccl.all_reduce(data, count);
  cuda::copy_to_host(host.data(), data, count);
  for (float v : host) EXPECT_EQ(v, float(size * (size + 1) / 2));
  float* gathered = cuda::device_alloc(count * size_t(size));
  nccl.all_gather(data, gathered, count);
  std::vector<float> all(count * size_t(size));
  cuda::copy_to_host(all.data(), gathered, all.size());
  for (float v : all) EXPECT_EQ(v, float(size * (size + 1) / 2));
  cuda::device_free(data), cuda::device_free(gathered);
}

}  // namespace
}  // namespace axo
