// GPU measurements (see gpu_bench.h).
#include "calibrate/gpu_bench.h"

#include <cuda_runtime.h>

#include "executor/cuda/cublas_gemm.h"
#include "executor/cuda/device.h"

namespace axo::calibration {

namespace {

class DeviceMemory : public BufferSpace {
 public:
  float* allocate(size_t count) const override { return cuda::device_alloc(std::max<size_t>(count, 1)); }
  void release(float* buffer) const override { cuda::device_free(buffer); }
  void upload(float* buffer, const std::vector<float>& values) const override {
    cuda::copy_to_device(buffer, values.data(), values.size());
  }
  std::vector<float> download(const float* buffer, size_t count) const override {
    std::vector<float> values(count);
    cuda::copy_to_host(values.data(), buffer, count);
    return values;
  }
};

// Device bytes released at scope exit.
struct DeviceBytes {
  void* pointer = nullptr;
  explicit DeviceBytes(size_t bytes) {
    cuda::check(cudaMalloc(&pointer, bytes), "cudaMalloc");
    cuda::check(cudaMemset(pointer, 0, bytes), "cudaMemset");
  }
  ~DeviceBytes() { cudaFree(pointer); }
};

}  // namespace

const BufferSpace& device_memory() {
  static const DeviceMemory memory;
  return memory;
}

std::vector<GemmShape> gpu_gemm_shapes(bool quick, const std::vector<GemmShape>& extra) {
  return gemm_grid(quick ? std::vector<int64_t>{1024, 4096} : std::vector<int64_t>{256, 1024, 4096, 8192}, extra);
}

std::vector<GemmSample> measure_gpu_gemms(Communicator& world, const std::vector<GemmShape>& shapes,
                                          double timeout_s, Watchdog* watchdog) {
  cuda::CublasGemm blas;
  std::vector<GemmSample> samples;
  for (Precision precision : {Precision::bf16, Precision::fp32}) {
    const size_t e = size_t(bytes_per_element(precision));
    for (const GemmShape& s : shapes) {
      DeviceBytes a(size_t(s.m * s.k) * e), b(size_t(s.k * s.n) * e), c(size_t(s.m * s.n) * e);
      const std::string what = std::string("cuBLAS ") + to_string(precision) + " GEMM " + std::to_string(s.m) +
                               "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      const double seconds = slowest_seconds_per_run(world, timeout_s, watchdog, what, 0.05, [&] {
        blas.gemm(precision, s.m, s.n, s.k, a.pointer, b.pointer, c.pointer);
        cuda::synchronize();
      });
      samples.push_back({precision, s.m, s.n, s.k, 2.0 * double(s.m) * double(s.n) * double(s.k) / seconds / 1e12});
    }
  }
  return samples;
}

DeviceRates measure_device_memory(Communicator& world, double timeout_s, Watchdog* watchdog) {
  DeviceRates rates;
  const size_t bytes = size_t(256) << 20;
  DeviceBytes from(bytes), to(bytes);
  const double copy = slowest_seconds_per_run(world, timeout_s, watchdog, "device copy", 0.2, [&] {
    cuda::check(cudaMemcpy(to.pointer, from.pointer, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    cuda::synchronize();
  });
  rates.copy_GBps = 2.0 * double(bytes) / copy / 1e9;
  void* pinned = nullptr;
  cuda::check(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  const double up = slowest_seconds_per_run(world, timeout_s, watchdog, "host to device copy", 0.2, [&] {
    cuda::check(cudaMemcpy(to.pointer, pinned, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  });
  const double down = slowest_seconds_per_run(world, timeout_s, watchdog, "device to host copy", 0.2, [&] {
    cuda::check(cudaMemcpy(pinned, from.pointer, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  });
  cudaFreeHost(pinned);
  rates.host_to_device_GBps = double(bytes) / up / 1e9;
  rates.device_to_host_GBps = double(bytes) / down / 1e9;
  return rates;
}

}  // namespace axo::calibration
