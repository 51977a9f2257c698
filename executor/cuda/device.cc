// CUDA device helpers (see device.h).
#include "executor/cuda/device.h"

#include <cuda_runtime.h>

#include <stdexcept>

namespace axo::cuda {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device / no driver" error
    return 0;
  }
  return count;
}

int select_device(int local_rank) {
  const int count = device_count();
  if (count == 0) throw std::runtime_error("no CUDA device is visible");
  const int device = local_rank % count;
  check(cudaSetDevice(device), "cudaSetDevice");
  return device;
}

std::string device_name(int device) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.name;
}

int sm_count(int device) {
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.multiProcessorCount;
}

void check(int status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA: ") + what + ": " +
                             cudaGetErrorString(static_cast<cudaError_t>(status)));
  }
}

float* device_alloc(size_t count) {
  void* pointer = nullptr;
  check(cudaMalloc(&pointer, count * sizeof(float)), "cudaMalloc");
  return static_cast<float*>(pointer);
}

void device_free(float* pointer) { cudaFree(pointer); }

void copy_to_device(float* device, const float* host, size_t count) {
  check(cudaMemcpy(device, host, count * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy to device");
}

void copy_to_host(float* host, const float* device, size_t count) {
  check(cudaMemcpy(host, device, count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy to host");
}

void synchronize() { check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

}  // namespace axo::cuda
