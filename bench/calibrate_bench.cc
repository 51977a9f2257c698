// Does calibration measure what plain MPI and BLAS would? Under mpirun:
//   mpirun --oversubscribe -np 4 build/bench/calibrate_bench
// For a few sizes, the all-reduce bus bandwidth through the executor's
// communicator (as `axo calibrate` times it) against a plain MPI_Allreduce
// loop in the same run, and the GEMM rate of cpu::gemm against a direct
// cblas_sgemm call. Ratios near 1 mean calibration adds no overhead of its own.
#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "calibrate/collective_bench.h"
#include "calibrate/compute_bench.h"
#include "executor/comm/mpi_communicator.h"

namespace {

double plain_allreduce_seconds(std::vector<float>& data, int iterations) {
  MPI_Allreduce(MPI_IN_PLACE, data.data(), int(data.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    MPI_Allreduce(MPI_IN_PLACE, data.data(), int(data.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  double seconds = (MPI_Wtime() - start) / iterations;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  axo::MpiSession session(&argc, &argv);
  axo::MpiCommunicator world(MPI_COMM_WORLD);
  const int p = world.size();
  const bool root = world.rank() == 0;
  axo::calibration::GroupShape shape{p, 1, p};
  axo::calibration::CollectiveBench bench{&world, &world, shape, 20, 120, nullptr, {}};
  if (root) std::printf("%12s %14s %14s %8s\n", "bytes", "axo busbw", "MPI busbw", "ratio");
  for (double bytes : {4096.0, 65536.0, 1048576.0, 8388608.0}) {
    const auto m = axo::calibration::measure(bench, axo::CollectiveOp::all_reduce, bytes);
    std::vector<float> data(size_t(m.bytes / 4), 1.0f);
    const double plain = plain_allreduce_seconds(data, int(m.iterations));
    const double factor = 2.0 * (p - 1) / p;
    const double plain_busbw = m.bytes / plain / 1e9 * factor;
    if (root) std::printf("%12.0f %14.3f %14.3f %8.3f\n", m.bytes, m.busbw_GBps(), plain_busbw, m.busbw_GBps() / plain_busbw);
  }
  if (root) std::printf("\n%18s %14s %14s %8s\n", "gemm m=n=k", "axo TFLOP/s", "cblas TFLOP/s", "ratio");
  for (int64_t n : {256, 512, 1024}) {
    const auto samples = axo::calibration::measure_gemms(world, {{n, n, n}}, 120);
    std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n));
    int runs = 0;
    const auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (runs < 2 || elapsed < 0.05) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, a.data(), int(n),
                  b.data(), int(n), 0.0f, c.data(), int(n));
      ++runs;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    double seconds = elapsed / runs;
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double plain = 2.0 * double(n) * double(n) * double(n) / seconds / 1e12;
    if (root) std::printf("%18lld %14.4f %14.4f %8.3f\n", (long long)n, samples[0].tflops, plain, samples[0].tflops / plain);
  }
  return 0;
}
