// CUDA devices for the executor and calibration: how many there are (zero,
// without an error, on a machine with no GPU or no driver), choosing one per
// local rank, and device memory as a buffer space.
#pragma once

#include <cstddef>
#include <string>

namespace axo::cuda {

// Visible devices; 0 when there is no GPU or no driver.
int device_count();
// Makes device local_rank % device_count() current; returns it.
int select_device(int local_rank);
std::string device_name(int device);
// Streaming multiprocessors of `device` (a GEMM's tiles run in waves over them).
int sm_count(int device);

// Throws std::runtime_error naming `what` when `status` (a cudaError_t) is not success.
void check(int status, const char* what);

float* device_alloc(size_t count);
void device_free(float* pointer);
void copy_to_device(float* device, const float* host, size_t count);
void copy_to_host(float* host, const float* device, size_t count);
void synchronize();

}  // namespace axo::cuda
